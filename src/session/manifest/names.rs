//! What a manifest's names may be, and the words of its refusals that more
//! than one check says.

/// A C identifier: a define.
pub(super) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Lowercase letters, digits and `_`: a toggle's or a parameter's name.
pub(super) fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Why a `test_only` parameter that is not optional is refused.
pub(super) const TEST_ONLY: &str =
    "a test_only parameter must be optional (its default is the shipped build)";
