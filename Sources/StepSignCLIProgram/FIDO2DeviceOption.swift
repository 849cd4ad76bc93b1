import ArgumentParser

/// `--fido2-device`: which security key libfido2 uses for `device enroll --fido2` and for the
/// step-up answers of a FIDO2 credential file (SPEC §5.7). Without it, the first key found.
struct FIDO2DeviceOption: ParsableArguments {
    @Option(name: .customLong("fido2-device"),
            help: ArgumentHelp("The FIDO2 security key to use: a hidraw device (/dev/hidrawN), or unix:PATH, a software authenticator serving CTAPHID on a Unix socket (64-byte HID reports; for tests and development). Default: the first key found.",
                               valueName: "path"))
    var path: String?
}
