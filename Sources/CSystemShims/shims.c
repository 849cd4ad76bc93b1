#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <unistd.h>
#include "CSystemShims.h"
#include <sys/prctl.h>

int stepsign_set_non_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int stepsign_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

int stepsign_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int stepsign_spawn_addclosefrom(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}

int stepsign_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int stepsign_open_path_nofollow(const char *path) {
    return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

int stepsign_fchown_group(int fd, unsigned int gid) {
    return fchownat(fd, "", (uid_t)-1, (gid_t)gid, AT_EMPTY_PATH);
}
