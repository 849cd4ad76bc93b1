#include "COpenSSLShims.h"
#include <openssl/crypto.h>

long stepsign_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

void stepsign_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}
