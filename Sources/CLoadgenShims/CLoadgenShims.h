// What the load generator (stepsign-loadgen) needs from C that Swift's Glibc module does not export.
#ifndef STEPSIGN_CLOADGENSHIMS_H
#define STEPSIGN_CLOADGENSHIMS_H

/// Swift's Glibc module does not export <sys/epoll.h>; the load generator waits on many
/// sockets with epoll, which costs what is ready rather than what is open.
#include <sys/epoll.h>

#endif
