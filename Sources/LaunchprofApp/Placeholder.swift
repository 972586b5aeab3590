// Placeholder until the Swift hooks land; delete when adding real sources.
