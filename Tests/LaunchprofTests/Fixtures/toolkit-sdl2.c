/*
 * An SDL 2 program that never calls launchprof: SDL_Init(SDL_INIT_VIDEO), then
 * LP_SDL_SETUP_BUSY_US (30000) of set-up and SDL_CreateWindow, then a software renderer's first
 * frame and an event loop until it is ended. Truth: "init SDL_Init <b> <e>" around SDL_Init,
 * "setup setup <b> <e>" from its return to SDL_CreateWindow's return.
 */
#include "run-fixture.h"
#include <SDL.h>
#include <stdio.h>
int main(int argc, char **argv) {
    uint64_t reached = lp_now();
    lp_truth("main", "main", reached, reached);
    uint64_t begin = lp_now();
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "toolkit-sdl2: SDL_Init: %s\n", SDL_GetError());
        return 1;
    }
    uint64_t initialized = lp_now();
    lp_truth("init", "SDL_Init", begin, initialized);
    lp_busy_us(lp_setting("LP_SDL_SETUP_BUSY_US", 30000));
    SDL_Window *window = SDL_CreateWindow("toolkit-sdl2", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, 200, 120, 0);
    lp_truth("setup", "setup", initialized, lp_now());
    if (!window) {
        fprintf(stderr, "toolkit-sdl2: SDL_CreateWindow: %s\n", SDL_GetError());
        return 1;
    }
    SDL_Renderer *renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE);
    for (;;) {
        SDL_Event event;
        while (SDL_PollEvent(&event)) {
            if (event.type == SDL_QUIT) {
                SDL_Quit();
                return 0;
            }
        }
        if (renderer) {
            SDL_SetRenderDrawColor(renderer, 40, 90, 160, 255);
            SDL_RenderClear(renderer);
            SDL_RenderPresent(renderer);
        }
        SDL_WaitEventTimeout(NULL, 100);
    }
}
