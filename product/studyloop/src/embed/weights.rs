//! The token-embedding table: one `F16` tensor `[vocab, dim]` in a safetensors
//! file, widened to `f32` once at load (16 MB of half floats, 32 MB in memory).
//! Parsing goes through the `safetensors` crate, which checks the header, the
//! offsets and that the byte count matches the shape, so a truncated or padded
//! file is refused with its reason instead of read past its end.

/// The tensor's name in wordllama's file.
const TENSOR: &str = "embedding.weight";

/// A `[rows, dim]` row-major `f32` table.
#[derive(Debug)]
pub(crate) struct Table {
    pub(crate) rows: usize,
    pub(crate) dim: usize,
    data: Vec<f32>,
}

impl Table {
    /// Parse the safetensors bytes; `Err` says what is wrong with them.
    pub(crate) fn from_safetensors(bytes: &[u8]) -> Result<Self, String> {
        let st = safetensors::SafeTensors::deserialize(bytes)
            .map_err(|e| format!("not a safetensors file: {e}"))?;
        let t = st
            .tensor(TENSOR)
            .map_err(|e| format!("no tensor `{TENSOR}`: {e}"))?;
        if t.dtype() != safetensors::Dtype::F16 {
            return Err(format!(
                "tensor `{TENSOR}` is {:?}, expected F16",
                t.dtype()
            ));
        }
        let &[rows, dim] = t.shape() else {
            return Err(format!(
                "tensor `{TENSOR}` has shape {:?}, expected [vocab, dim]",
                t.shape()
            ));
        };
        if rows == 0 || dim == 0 {
            return Err(format!("tensor `{TENSOR}` is empty ({rows} x {dim})"));
        }
        let data = t
            .data()
            .chunks_exact(2)
            .map(|h| f16_to_f32(u16::from_le_bytes([h[0], h[1]])))
            .collect();
        Ok(Self { rows, dim, data })
    }

    /// Row `id` (the caller checked `id < rows` once for the whole tokenizer).
    pub(crate) fn row(&self, id: u32) -> &[f32] {
        let start = usize::try_from(id).unwrap_or(usize::MAX).min(self.rows - 1) * self.dim;
        &self.data[start..start + self.dim]
    }
}

/// IEEE 754 half to single precision (exact: every half is a single).
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        // Subnormal: normalize the fraction.
        (0, _) => {
            let shift = frac.leading_zeros() - 21;
            sign | ((127 - 15 + 1 - shift) << 23) | ((frac << shift) & 0x3ff) << 13
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_widen_exactly() {
        let cases = [
            (0x0000, 0.0),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x03ff, 6.097_555e-5),
        ];
        for (h, f) in cases {
            assert_eq!(f16_to_f32(h), f, "{h:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    fn file(shape: [usize; 2], payload: usize) -> Vec<u8> {
        let header = serde_json::json!({TENSOR: {"dtype": "F16", "shape": shape, "data_offsets": [0, payload]}}).to_string();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header.as_bytes());
        out.extend(std::iter::repeat_n(0x3cu8, payload));
        out
    }

    #[test]
    fn reads_a_table_and_refuses_a_truncated_one() {
        let t = Table::from_safetensors(&file([3, 2], 12)).unwrap();
        assert_eq!((t.rows, t.dim), (3, 2));
        assert_eq!(t.row(2).len(), 2);
        let mut cut = file([3, 2], 12);
        cut.truncate(cut.len() - 5);
        let err = Table::from_safetensors(&cut).unwrap_err();
        assert!(err.contains("not a safetensors file"), "{err}");
        assert!(Table::from_safetensors(b"\x05").is_err());
    }
}
