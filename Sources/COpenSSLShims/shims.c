#include "COpenSSLShims.h"
#include <openssl/crypto.h>
#include <openssl/evp.h>

long stepsign_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

void stepsign_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

int stepsign_EVP_PKEY_PUBLIC_KEY(void) {
    return EVP_PKEY_PUBLIC_KEY;
}
