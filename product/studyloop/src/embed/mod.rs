//! Sentence embeddings for the hybrid `search`: a static embedding model
//! (wordllama `l2_supercat_256`, MIT: one 256-wide vector per Llama-2 token, a
//! text is the mean of its tokens' vectors), loaded from the directory
//! `STUDYLOOP_EMBED_MODEL` names. `just deps-embed` installs it from the pinned
//! PyPI wheel that ships it (docs/dependencies.md#embeddings); nothing is ever
//! downloaded at run time.
//!
//! Why a static model: a lookup and a mean are the whole inference, so the
//! runtime is the `safetensors` reader plus a tokenizer, no tensor engine, and
//! embedding a line costs microseconds (write-time indexing stays free). The
//! product knows the model by the sha256 of its two files: a corrupt, truncated
//! or swapped file is refused with a clear reason, and `search` falls back to
//! lexical saying so; it never embeds with a model it does not know.
//!
//! What it is not: a general model loader or a vector index (the store scans
//! its vectors; a study history is thousands of lines, not millions).

mod bpe;
mod model;
mod weights;

pub use model::{
    Availability, EmbedError, Embedder, INSTALL_DIR, MAX_EMBED_CHARS, MODEL_ID, cosine,
};
