// System calls the daemon needs that Swift cannot import. Each says why it exists.
#ifndef STEPSIGN_CSYSTEMSHIMS_H
#define STEPSIGN_CSYSTEMSHIMS_H

/// prctl(2) is variadic, and Swift cannot call variadic C functions. Marks the process
/// non-dumpable: no core dumps, and other processes of the same user cannot ptrace it or read
/// /proc/PID/mem. Returns 0, or -1 with errno set.
int stepsign_set_non_dumpable(void);

/// Returns 1 when the process is dumpable, 0 when not, -1 on error (for tests).
int stepsign_is_dumpable(void);

/// pipe2(2) is declared only under _GNU_SOURCE, which Swift's Glibc module does not set.
/// Makes a pipe whose ends are close-on-exec from the start. Returns 0, or -1 with errno.
int stepsign_pipe_cloexec(int fds[2]);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34) is declared only under _GNU_SOURCE.
/// Makes the spawned child close every descriptor from `from` on. Returns 0 or an errno value.
int stepsign_spawn_addclosefrom(void *actions, int from);

/// pthread_setname_np is declared only under _GNU_SOURCE. Names the calling thread for
/// `top -H`, perf and /proc/PID/task/TID/comm (at most 15 bytes are kept). Returns 0 or an
/// errno value.
int stepsign_name_this_thread(const char *name);

/// O_PATH and AT_EMPTY_PATH are defined only under _GNU_SOURCE. Opens `path` itself, never
/// what a symbolic link there points at (O_PATH | O_NOFOLLOW | O_CLOEXEC): a descriptor that
/// fstat(2) and stepsign_fchown_group can use, also for a socket, which open(2) cannot read.
/// Returns the descriptor, or -1 with errno set.
int stepsign_open_path_nofollow(const char *path);

/// Gives the file `fd` refers to (from stepsign_open_path_nofollow) the group `gid`, its owner
/// unchanged: fchownat(fd, "", -1, gid, AT_EMPTY_PATH). Returns 0, or -1 with errno set.
int stepsign_fchown_group(int fd, unsigned int gid);

#endif
