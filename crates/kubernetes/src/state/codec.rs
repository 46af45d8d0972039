//! The state as Secrets hold it: the JSON compressed with zlib, then cut into pieces that each
//! fit a Secret (the API server refuses one above 1 MiB; etcd's own request limit is near).

use sha2::{Digest, Sha256};

/// The largest piece one Secret holds, well under the API server's 1 MiB.
pub(super) const CHUNK_BYTES: usize = 900 * 1024;

/// A state no larger than this when decompressed is accepted; a larger one is corrupt (or
/// not skyplan's), and is not inflated without end.
const MAX_STATE_BYTES: usize = 1 << 30;

pub(super) fn compress(json: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(json, 6)
}

pub(super) fn decompress(compressed: &[u8]) -> Result<Vec<u8>, String> {
    miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(compressed, MAX_STATE_BYTES)
        .map_err(|e| format!("the stored state does not inflate ({:?})", e.status))
}

/// The pieces of `compressed`, each at most [`CHUNK_BYTES`].
pub(super) fn split(compressed: &[u8]) -> Vec<&[u8]> {
    compressed.chunks(CHUNK_BYTES).collect()
}

/// What the index records to check the pieces put back together against.
pub(super) fn digest(compressed: &[u8]) -> String {
    Sha256::digest(compressed)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_comes_back_through_compression_and_pieces() {
        // Incompressible bytes (the high byte of an LCG), so that the compressed form needs
        // several pieces.
        let mut seed = 1u64;
        let json: Vec<u8> = (0..3 * CHUNK_BYTES)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (seed >> 56) as u8
            })
            .collect();
        let compressed = compress(&json);
        let pieces = split(&compressed);
        assert!(pieces.len() >= 3, "{} pieces", pieces.len());
        assert!(pieces.iter().all(|p| p.len() <= CHUNK_BYTES));
        let joined = pieces.concat();
        assert_eq!(digest(&joined), digest(&compressed));
        assert_eq!(decompress(&joined).unwrap(), json);
    }

    #[test]
    fn a_cut_short_state_is_refused() {
        let compressed = compress(br#"{"resources": {}}"#);
        assert!(decompress(&compressed[..compressed.len() / 2]).is_err());
    }
}
