#include "CSystemShims.h"
#include <sys/prctl.h>

int stepsign_set_non_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int stepsign_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
