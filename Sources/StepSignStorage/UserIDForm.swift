import Foundation

/// The form of a user ID (SPEC §3 "User IDs"): stored and compared byte-wise, in Unicode NFC,
/// and never two that look alike.
///
/// Two IDs look alike when their ``lookalikeKey(_:)``s are equal: canonically equivalent (NFC
/// and NFD spellings of `josé`) or equal ignoring case (`Alice`, `alice`; `straße`,
/// `STRASSE`). The store keeps each user's key beside the name and refuses a new user whose key
/// another user holds, in the transaction that adds it, so no path that makes users can
/// create a twin.
package enum UserIDForm {
    /// Whether `name` is in Unicode Normalization Form C (its scalars are those of its NFC form).
    package static func isNFC(_ name: String) -> Bool {
        name.utf8.elementsEqual(name.precomposedStringWithCanonicalMapping.utf8)
    }

    /// The key two lookalike IDs share: NFC, then the full case mapping to upper and back to
    /// lower case (so `ß`, `SS` and `ss` meet, as Unicode's case folding has them), then NFC again.
    package static func lookalikeKey(_ name: String) -> String {
        name.precomposedStringWithCanonicalMapping.uppercased().lowercased().precomposedStringWithCanonicalMapping
    }
}
