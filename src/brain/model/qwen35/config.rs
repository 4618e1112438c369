//! Qwen3.5 hyper-parameters, from a GGUF file's `qwen35.*` metadata or a Hugging Face
//! `config.json` (`qwen3_5_text`, or the `text_config` of the multimodal `qwen3_5`).

use candle_core::quantized::gguf_file;
use serde_json::Value;

type Result<T> = candle_core::Result<T>;

/// How the value heads of a linear-attention layer are laid out against its key heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadOrder {
    /// Hugging Face: the value heads of one key head are consecutive (value head `h` reads
    /// key head `h / ratio`).
    Grouped,
    /// llama.cpp's converter reorders them so key heads repeat as a whole (value head `h`
    /// reads key head `h % key_heads`).
    Tiled,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Qwen35Config {
    pub n_layer: usize,
    pub hidden: usize,
    pub vocab: usize,
    pub context_length: usize,
    pub rms_eps: f64,
    /// Full attention: query heads, key/value heads, head size.
    pub n_head: usize,
    pub n_kv_head: usize,
    pub head_dim: usize,
    /// Leading dimensions of each head that get the rotary embedding.
    pub rope_dim: usize,
    pub rope_base: f32,
    /// Linear attention (Gated DeltaNet): key heads, value heads, their sizes, the width of
    /// the causal convolution.
    pub lin_k_heads: usize,
    pub lin_v_heads: usize,
    pub lin_k_dim: usize,
    pub lin_v_dim: usize,
    pub conv_kernel: usize,
    pub head_order: HeadOrder,
    /// Per layer: true for linear attention, false for full attention.
    pub recurrent: Vec<bool>,
}

impl Qwen35Config {
    pub fn conv_dim(&self) -> usize {
        2 * self.lin_k_heads * self.lin_k_dim + self.lin_v_heads * self.lin_v_dim
    }

    /// The key head that value head `h` of a linear-attention layer reads.
    pub fn key_head_of(&self, h: usize) -> usize {
        match self.head_order {
            HeadOrder::Grouped => h / (self.lin_v_heads / self.lin_k_heads),
            HeadOrder::Tiled => h % self.lin_k_heads,
        }
    }

    fn check(self) -> Result<Self> {
        let ok = self.n_layer > 0
            && self.recurrent.len() == self.n_layer
            && self.n_head > 0
            && self.n_kv_head > 0
            && self.n_head.is_multiple_of(self.n_kv_head)
            && self.head_dim > 0
            && self.rope_dim <= self.head_dim
            && self.rope_dim.is_multiple_of(2)
            && self.lin_k_heads > 0
            && self.lin_v_heads.is_multiple_of(self.lin_k_heads)
            && self.conv_kernel > 0;
        if !ok {
            candle_core::bail!("inconsistent Qwen3.5 shape: {self:?}");
        }
        Ok(self)
    }

    /// The hyper-parameters in `qwen35.*` GGUF metadata (names as llama.cpp writes them).
    pub fn from_gguf(content: &gguf_file::Content) -> Result<Self> {
        let get = |key: &str| content.metadata.get(&format!("qwen35.{key}"));
        let need = |key: &str| get(key).ok_or_else(|| candle_core::Error::Msg(format!("GGUF metadata has no qwen35.{key}")));
        let num = |key: &str| -> Result<usize> { Ok(need(key)?.to_u32()? as usize) };
        // A file converted with its multi-token-prediction block counts it as one more
        // block; the main pass runs only the trunk.
        let nextn = get("nextn_predict_layers").map(|v| v.to_u32()).transpose()?.unwrap_or(0) as usize;
        let n_layer = num("block_count")?.saturating_sub(nextn);
        let n_head = num("attention.head_count")?;
        let hidden = num("embedding_length")?;
        let head_dim = match get("attention.key_length") {
            Some(v) => v.to_u32()? as usize,
            None => hidden / n_head.max(1),
        };
        let recurrent = match get("attention.recurrent_layers") {
            Some(gguf_file::Value::Array(flags)) => flags.iter().take(n_layer).map(|f| f.to_bool()).collect::<Result<Vec<_>>>()?,
            _ => {
                let interval = get("full_attention_interval").map(|v| v.to_u32()).transpose()?.unwrap_or(4).max(1) as usize;
                (0..n_layer).map(|i| (i + 1) % interval != 0).collect()
            }
        };
        let lin_k_heads = num("ssm.group_count")?;
        let lin_v_heads = num("ssm.time_step_rank")?;
        let state = num("ssm.state_size")?;
        let vocab = content
            .tensor_infos
            .get("token_embd.weight")
            .map(|t| t.shape.dims()[0])
            .ok_or_else(|| candle_core::Error::Msg("GGUF has no token_embd.weight".into()))?;
        Self {
            n_layer,
            hidden,
            vocab,
            context_length: num("context_length")?,
            rms_eps: f64::from(need("attention.layer_norm_rms_epsilon")?.to_f32()?),
            n_head,
            n_kv_head: num("attention.head_count_kv")?,
            head_dim,
            rope_dim: get("rope.dimension_count").map(|v| v.to_u32()).transpose()?.map_or(head_dim, |d| d as usize),
            rope_base: get("rope.freq_base").map(|v| v.to_f32()).transpose()?.unwrap_or(10_000.0),
            lin_k_heads,
            lin_v_heads,
            lin_k_dim: state,
            lin_v_dim: num("ssm.inner_size")? / lin_v_heads.max(1),
            conv_kernel: num("ssm.conv_kernel")?,
            head_order: HeadOrder::Tiled,
            recurrent,
        }
        .check()
    }

    /// The hyper-parameters in a Hugging Face `config.json` (the text model's part of a
    /// multimodal one).
    pub fn from_hf(config: &Value) -> Result<Self> {
        let text = config.get("text_config").unwrap_or(config);
        let field = |key: &str| text.get(key).filter(|v| !v.is_null());
        let num = |key: &str| -> Result<usize> {
            field(key)
                .and_then(Value::as_u64)
                .map(|n| n as usize)
                .ok_or_else(|| candle_core::Error::Msg(format!("config.json has no number {key}")))
        };
        let float = |key: &str| field(key).and_then(Value::as_f64);
        let n_layer = num("num_hidden_layers")?;
        let n_head = num("num_attention_heads")?;
        let hidden = num("hidden_size")?;
        let head_dim = num("head_dim").unwrap_or(hidden / n_head.max(1));
        let rope = field("rope_parameters").or_else(|| field("rope_scaling"));
        let rope_param = |key: &str| rope.and_then(|r| r.get(key)).and_then(Value::as_f64).or_else(|| float(key));
        let partial = rope_param("partial_rotary_factor").unwrap_or(0.25);
        let recurrent = match field("layer_types").and_then(Value::as_array) {
            Some(kinds) => kinds
                .iter()
                .map(|k| match k.as_str() {
                    Some("linear_attention") => Ok(true),
                    Some("full_attention") => Ok(false),
                    other => Err(candle_core::Error::Msg(format!("unknown layer type {other:?} in layer_types"))),
                })
                .collect::<Result<Vec<_>>>()?,
            None => {
                let interval = num("full_attention_interval").unwrap_or(4).max(1);
                (0..n_layer).map(|i| (i + 1) % interval != 0).collect()
            }
        };
        Self {
            n_layer,
            hidden,
            vocab: num("vocab_size")?,
            context_length: num("max_position_embeddings").unwrap_or(32768),
            rms_eps: float("rms_norm_eps").unwrap_or(1e-6),
            n_head,
            n_kv_head: num("num_key_value_heads")?,
            head_dim,
            rope_dim: ((head_dim as f64 * partial) as usize) & !1,
            rope_base: rope_param("rope_theta").unwrap_or(10_000.0) as f32,
            lin_k_heads: num("linear_num_key_heads")?,
            lin_v_heads: num("linear_num_value_heads")?,
            lin_k_dim: num("linear_key_head_dim")?,
            lin_v_dim: num("linear_value_head_dim")?,
            conv_kernel: num("linear_conv_kernel_dim").unwrap_or(4),
            head_order: HeadOrder::Grouped,
            recurrent,
        }
        .check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hf_text_config() -> Value {
        serde_json::json!({
            "model_type": "qwen3_5_text",
            "hidden_size": 64, "num_hidden_layers": 4, "vocab_size": 512,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
            "linear_num_key_heads": 2, "linear_num_value_heads": 4,
            "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4,
            "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
            "rope_parameters": {"rope_theta": 10000000.0, "partial_rotary_factor": 0.25, "rope_type": "default"},
            "rms_norm_eps": 1e-6, "max_position_embeddings": 4096
        })
    }

    #[test]
    fn a_text_config_and_the_text_part_of_a_multimodal_one_read_the_same() {
        let text = Qwen35Config::from_hf(&hf_text_config()).unwrap();
        let multimodal = serde_json::json!({"model_type": "qwen3_5", "text_config": hf_text_config(), "vision_config": {}});
        assert_eq!(Qwen35Config::from_hf(&multimodal).unwrap(), text);
        assert_eq!(text.recurrent, [true, true, true, false]);
        assert_eq!((text.rope_dim, text.rope_base, text.conv_dim()), (8, 10_000_000.0, 2 * 32 + 64));
    }

    #[test]
    fn value_heads_read_their_key_head_in_either_order() {
        let mut c = Qwen35Config::from_hf(&hf_text_config()).unwrap();
        assert_eq!((0..4).map(|h| c.key_head_of(h)).collect::<Vec<_>>(), [0, 0, 1, 1]);
        c.head_order = HeadOrder::Tiled;
        assert_eq!((0..4).map(|h| c.key_head_of(h)).collect::<Vec<_>>(), [0, 1, 0, 1]);
    }

    #[test]
    fn without_layer_types_every_fourth_layer_is_full_attention() {
        let mut v = hf_text_config();
        v.as_object_mut().unwrap().remove("layer_types");
        v["num_hidden_layers"] = 8.into();
        assert_eq!(Qwen35Config::from_hf(&v).unwrap().recurrent, [true, true, true, false, true, true, true, false]);
    }

    #[test]
    fn a_shape_that_does_not_divide_is_an_error() {
        let mut v = hf_text_config();
        v["linear_num_value_heads"] = 3.into();
        assert!(Qwen35Config::from_hf(&v).is_err());
    }
}
