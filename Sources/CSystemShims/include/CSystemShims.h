// System calls the daemon needs that Swift cannot import. Each says why it exists.
#ifndef STEPSIGN_CSYSTEMSHIMS_H
#define STEPSIGN_CSYSTEMSHIMS_H

/// prctl(2) is variadic, and Swift cannot call variadic C functions. Marks the process
/// non-dumpable: no core dumps, and other processes of the same user cannot ptrace it or read
/// /proc/PID/mem. Returns 0, or -1 with errno set.
int stepsign_set_non_dumpable(void);

/// Returns 1 when the process is dumpable, 0 when not, -1 on error (for tests).
int stepsign_is_dumpable(void);

#endif
