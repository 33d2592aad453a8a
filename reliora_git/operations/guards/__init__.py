"""Guards: which guards fire on which lines, in what time, the guards a change brings."""
