//! Pieces the architectures share: a KV cache that can be cut back, the causal mask and
//! the rotary tables.

use candle_core::{DType, Device, Tensor};

type Result<T> = candle_core::Result<T>;

/// One layer's K and V for positions `0..len`, in buffers of `capacity` positions.
pub struct LayerCache {
    pub k: Option<Tensor>,
    pub v: Option<Tensor>,
    pub len: usize,
}

impl LayerCache {
    pub fn new() -> Self {
        Self { k: None, v: None, len: 0 }
    }

    /// A copy of positions `0..len`, not a shared view: the current cache is written in
    /// place later.
    pub fn copy(&self) -> Result<Self> {
        let copy = |t: &Option<Tensor>| t.as_ref().map(|t| t.narrow(2, 0, self.len)?.copy()).transpose();
        Ok(Self { k: copy(&self.k)?, v: copy(&self.v)?, len: self.len })
    }

    pub fn capacity(&self) -> usize {
        self.k.as_ref().and_then(|k| k.dims().get(2).copied()).unwrap_or(0)
    }

    /// Appends `k`, `v` (shape `(1, n_kv, s, head_dim)`) at `self.len`; returns views of
    /// the whole cached K and V.
    pub fn append(&mut self, k: &Tensor, v: &Tensor, max_len: usize) -> Result<(Tensor, Tensor)> {
        let (b, n_kv, s, head_dim) = k.dims4()?;
        let needed = self.len + s;
        if needed > self.capacity() {
            // Grow in steps of 512 positions: a copy per 512 new tokens costs little next to
            // their prefill, and doubling left up to half the (largest) buffer unused.
            let capacity = needed.next_multiple_of(512).min(max_len.max(needed));
            let k_buf = Tensor::zeros((b, n_kv, capacity, head_dim), k.dtype(), k.device())?;
            let v_buf = Tensor::zeros((b, n_kv, capacity, head_dim), v.dtype(), v.device())?;
            if let (Some(old_k), Some(old_v)) = (&self.k, &self.v) {
                if self.len > 0 {
                    k_buf.slice_set(&old_k.narrow(2, 0, self.len)?.contiguous()?, 2, 0)?;
                    v_buf.slice_set(&old_v.narrow(2, 0, self.len)?.contiguous()?, 2, 0)?;
                }
            }
            self.k = Some(k_buf);
            self.v = Some(v_buf);
        }
        let (Some(k_buf), Some(v_buf)) = (&self.k, &self.v) else {
            candle_core::bail!("kv cache buffers missing")
        };
        k_buf.slice_set(&k.contiguous()?, 2, self.len)?;
        v_buf.slice_set(&v.contiguous()?, 2, self.len)?;
        self.len = needed;
        Ok((k_buf.narrow(2, 0, self.len)?, v_buf.narrow(2, 0, self.len)?))
    }
}

/// Additive mask `(s, pos + s)`: query `i` (at position `pos + i`) sees keys `0..=pos + i`.
pub fn causal_mask(s: usize, pos: usize, device: &Device) -> Result<Tensor> {
    let kv_len = pos + s;
    let values: Vec<f32> = (0..s)
        .flat_map(|i| (0..kv_len).map(move |j| if j > pos + i { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    Tensor::from_vec(values, (s, kv_len), device)
}

pub fn rope_tables(head_dim: usize, base: f32, context: usize, device: &Device) -> Result<(Tensor, Tensor)> {
    let inv_freq: Vec<f32> = (0..head_dim)
        .step_by(2)
        .map(|i| 1.0 / base.powf(i as f32 / head_dim as f32))
        .collect();
    let n = inv_freq.len();
    let inv_freq = Tensor::from_vec(inv_freq, (1, n), device)?;
    let positions = Tensor::arange(0u32, context as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((context, 1))?;
    let angles = positions.matmul(&inv_freq)?;
    Ok((angles.cos()?, angles.sin()?))
}
