// The OASIS PKCS#11 (Cryptoki 2.40) types, constants and function list, from Debian's
// libp11-kit-dev (p11-kit's pkcs11.h, in its PKCS#11 compatibility names). Header only: the
// module itself ([signing.pkcs11] module) is loaded with dlopen at start, so nothing is linked.
#ifndef STEPSIGN_CPKCS11_H
#define STEPSIGN_CPKCS11_H
#include <p11-kit-1/p11-kit/pkcs11.h>
#endif
