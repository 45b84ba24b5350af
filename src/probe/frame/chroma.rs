//! What a row converter reads besides the luma: shared by the converters of every width.

/// One row's chroma: NV12's interleaved U/V pairs, or I420's separate U and V rows.
pub(super) enum Chroma<'a> {
    Interleaved(&'a [u8]),
    Planar(&'a [u8], &'a [u8]),
}
