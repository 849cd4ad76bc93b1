// libfido2 (Debian libfido2-dev): FIDO2 security keys for the CLI only (SPEC §5.7).
#include <fido.h>
