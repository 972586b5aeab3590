/*
 * A plain SDL 2 program for Benchmarks/real-apps.sh: SDL_Init(VIDEO), one window, one cleared
 * frame presented, then an event loop. Nothing of launchprof's: its phases come from SDL itself.
 */
#include <SDL2/SDL.h>

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    if (SDL_Init(SDL_INIT_VIDEO) != 0) return 1;
    SDL_Window *window = SDL_CreateWindow("sdl-window", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, 320, 200, 0);
    if (!window) return 1;
    SDL_Renderer *renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE);
    SDL_SetRenderDrawColor(renderer, 40, 90, 160, 255);
    SDL_RenderClear(renderer);
    SDL_RenderPresent(renderer);
    for (SDL_Event event;;) {
        if (SDL_WaitEvent(&event) && event.type == SDL_QUIT) break;
    }
    SDL_Quit();
    return 0;
}
