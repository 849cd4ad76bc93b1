// Small C functions for the parts of libcrypto's API that Swift cannot import:
// function-like macros and macros that pass __FILE__/__LINE__. Each says why it exists.
#ifndef STEPSIGN_COPENSSLSHIMS_H
#define STEPSIGN_COPENSSLSHIMS_H
#include <stddef.h>
#include <openssl/bio.h>

/// BIO_get_mem_data is a macro over BIO_ctrl; Swift cannot import it.
long stepsign_BIO_get_mem_data(BIO *bio, char **data);

/// OPENSSL_free is a macro that passes __FILE__ and __LINE__ to CRYPTO_free.
void stepsign_OPENSSL_free(void *pointer);

/// EVP_PKEY_PUBLIC_KEY (the selection for EVP_PKEY_fromdata) is an OR of other macros;
/// Swift imports only macros that are single literals.
int stepsign_EVP_PKEY_PUBLIC_KEY(void);

/// SHA-256 of the concatenation of up to three parts (a part of length 0 may be NULL), with
/// libcrypto's low-level functions: no allocation (sha256.c says why). Returns 1, or 0 if
/// libcrypto failed.
int stepsign_sha256_parts(const void *first, size_t firstLength,
                          const void *second, size_t secondLength,
                          const void *third, size_t thirdLength,
                          unsigned char digest[32]);

#endif
