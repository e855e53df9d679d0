//! The model's tokenizer: a SentencePiece-style BPE with byte fallback, read from
//! the Hugging Face `tokenizer.json` the model ships (Llama-2's 32 000 pieces).
//!
//! Why our own and not the `tokenizers` crate: this model needs only one
//! normalizer pair (prepend `▁`, spaces to `▁`), no pre-tokenizer and plain BPE
//! merges, about 150 lines; the crate would add dozens of dependencies to every
//! cold build (docs/dependencies.md#embeddings). The merge loop is the crate's own
//! algorithm (lowest rank first, leftmost on ties, a heap over a linked list), so
//! ids match it exactly; `tests` pin ids the crate produced for the same strings.
//!
//! What it is not: a general tokenizer. [`Tokenizer::from_json`] refuses a file
//! whose model or normalizer it does not implement rather than guess.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use serde::Deserialize;

/// The word-boundary mark SentencePiece puts for a space.
const SPACE_MARK: char = '\u{2581}';

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    added_tokens: Vec<Added>,
    normalizer: serde_json::Value,
    pre_tokenizer: serde_json::Value,
    model: Model,
}

#[derive(Deserialize)]
struct Added {
    id: u32,
    content: String,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    merges: Vec<Merge>,
    #[serde(default)]
    byte_fallback: bool,
    unk_token: Option<String>,
}

/// A merge rule: `"a b"` (older files) or `["a", "b"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Merge {
    Joined(String),
    Pair(String, String),
}

/// A loaded tokenizer.
#[derive(Debug)]
pub(crate) struct Tokenizer {
    vocab: HashMap<String, u32>,
    /// `(left id, right id)` → `(rank, merged id)`.
    merges: HashMap<(u32, u32), (u32, u32)>,
    /// Special tokens matched verbatim in the raw text, longest first.
    added: Vec<(String, u32)>,
    /// `<0xNN>` ids, when the model falls back to bytes.
    bytes: Option<Vec<u32>>,
    unk: Option<u32>,
}

impl Tokenizer {
    /// Parse `tokenizer.json`; `Err` names what this tokenizer does not support.
    pub(crate) fn from_json(text: &[u8]) -> Result<Self, String> {
        let f: File =
            serde_json::from_slice(text).map_err(|e| format!("not a tokenizer.json: {e}"))?;
        if f.model.kind != "BPE" {
            return Err(format!("model type `{}` (supported: BPE)", f.model.kind));
        }
        if !f.pre_tokenizer.is_null() || f.normalizer != expected_normalizer() {
            return Err(
                "a normalizer or pre-tokenizer other than Llama-2's (prepend ▁, spaces to ▁)"
                    .into(),
            );
        }
        let id = |s: &str| f.model.vocab.get(s).copied();
        let mut merges = HashMap::with_capacity(f.model.merges.len());
        for (rank, m) in f.model.merges.iter().enumerate() {
            let (a, b) = match m {
                Merge::Joined(s) => s
                    .split_once(' ')
                    .ok_or_else(|| format!("merge `{s}` has no space"))?,
                Merge::Pair(a, b) => (a.as_str(), b.as_str()),
            };
            let (Some(ia), Some(ib), Some(joined)) = (id(a), id(b), id(&format!("{a}{b}"))) else {
                return Err(format!(
                    "merge `{a} {b}` names a piece missing from the vocabulary"
                ));
            };
            let rank = u32::try_from(rank).map_err(|_| "too many merges".to_owned())?;
            merges.entry((ia, ib)).or_insert((rank, joined));
        }
        let bytes = if f.model.byte_fallback {
            let ids: Option<Vec<u32>> = (0u8..=255).map(|b| id(&format!("<0x{b:02X}>"))).collect();
            Some(ids.ok_or("byte fallback without all 256 `<0xNN>` pieces")?)
        } else {
            None
        };
        let mut added: Vec<(String, u32)> = f
            .added_tokens
            .into_iter()
            .filter(|a| !a.content.is_empty())
            .map(|a| (a.content, a.id))
            .collect();
        added.sort_by_key(|a| std::cmp::Reverse(a.0.len()));
        let unk = f.model.unk_token.as_deref().and_then(id);
        Ok(Self {
            vocab: f.model.vocab,
            merges,
            added,
            bytes,
            unk,
        })
    }

    /// The largest id this tokenizer can produce.
    pub(crate) fn max_id(&self) -> u32 {
        let merged = self.merges.values().map(|m| m.1);
        self.vocab
            .values()
            .copied()
            .chain(merged)
            .chain(self.added.iter().map(|a| a.1))
            .max()
            .unwrap_or(0)
    }

    /// Token ids of `text`, without special tokens (as the model was run).
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            // The earliest special token (longest at one position) splits the text.
            let hit = self
                .added
                .iter()
                .filter_map(|(s, id)| rest.find(s.as_str()).map(|at| (at, s.len(), *id)))
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let (plain, special) = match hit {
                Some((at, len, id)) => (&rest[..at], Some((len, id, at))),
                None => (rest, None),
            };
            self.encode_plain(plain, &mut ids);
            match special {
                Some((len, id, at)) => {
                    ids.push(id);
                    rest = &rest[at + len..];
                }
                None => rest = "",
            }
        }
        ids
    }

    /// One segment between special tokens: normalize, then BPE as one word.
    fn encode_plain(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let normalized: String = std::iter::once(SPACE_MARK)
            .chain(text.chars().map(|c| if c == ' ' { SPACE_MARK } else { c }))
            .collect();
        let mut syms: Vec<Sym> = Vec::with_capacity(normalized.len());
        let mut buf = [0u8; 4];
        for c in normalized.chars() {
            if let Some(&id) = self.vocab.get(c.encode_utf8(&mut buf) as &str) {
                syms.push(Sym::new(id));
            } else if let Some(bytes) = &self.bytes {
                syms.extend(
                    c.encode_utf8(&mut buf)
                        .bytes()
                        .map(|b| Sym::new(bytes[usize::from(b)])),
                );
            } else if let Some(unk) = self.unk {
                // fuse_unk: one unknown piece for a run of unknown characters.
                if syms.last().is_none_or(|s| s.id != unk) {
                    syms.push(Sym::new(unk));
                }
            }
        }
        self.merge(&mut syms);
        out.extend(syms.iter().filter(|s| s.alive).map(|s| s.id));
    }

    fn merge(&self, syms: &mut [Sym]) {
        let n = syms.len();
        for (i, s) in syms.iter_mut().enumerate() {
            s.prev = i.checked_sub(1);
            s.next = (i + 1 < n).then_some(i + 1);
        }
        let mut heap = BinaryHeap::new();
        for i in 0..n.saturating_sub(1) {
            self.push(&mut heap, syms, i, i + 1);
        }
        while let Some(top) = heap.pop() {
            let Some(next) = syms[top.pos].next else {
                continue;
            };
            if !syms[top.pos].alive
                || self
                    .merges
                    .get(&(syms[top.pos].id, syms[next].id))
                    .is_none_or(|m| m.1 != top.id)
            {
                continue;
            }
            syms[top.pos].id = top.id;
            syms[top.pos].next = syms[next].next;
            syms[next].alive = false;
            if let Some(after) = syms[next].next {
                syms[after].prev = Some(top.pos);
                self.push(&mut heap, syms, top.pos, after);
            }
            if let Some(before) = syms[top.pos].prev {
                self.push(&mut heap, syms, before, top.pos);
            }
        }
    }

    fn push(&self, heap: &mut BinaryHeap<Pending>, syms: &[Sym], left: usize, right: usize) {
        if let Some(&(rank, id)) = self.merges.get(&(syms[left].id, syms[right].id)) {
            heap.push(Pending {
                rank,
                pos: left,
                id,
            });
        }
    }
}

fn expected_normalizer() -> serde_json::Value {
    serde_json::json!({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u{2581}"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u{2581}"}
    ]})
}

#[derive(Debug, Clone, Copy)]
struct Sym {
    id: u32,
    prev: Option<usize>,
    next: Option<usize>,
    alive: bool,
}

impl Sym {
    fn new(id: u32) -> Self {
        Self {
            id,
            prev: None,
            next: None,
            alive: true,
        }
    }
}

/// A candidate merge: the heap pops the lowest rank, then the leftmost.
#[derive(PartialEq, Eq)]
struct Pending {
    rank: u32,
    pos: usize,
    id: u32,
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        other.rank.cmp(&self.rank).then(other.pos.cmp(&self.pos))
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: merges in rank order `a b`, `ab c`, `▁ ab`.
    fn toy() -> Tokenizer {
        let mut vocab: serde_json::Map<String, serde_json::Value> = serde_json::Map::new();
        let pieces = ["<unk>", "<s>", "▁", "a", "b", "c", "ab", "abc", "▁ab"];
        for (i, p) in pieces.iter().enumerate() {
            vocab.insert((*p).into(), i.into());
        }
        for b in 0u8..=255 {
            let n = vocab.len();
            vocab.insert(format!("<0x{b:02X}>"), n.into());
        }
        let json = serde_json::json!({
            "added_tokens": [{"id": 1, "content": "<s>"}],
            "normalizer": expected_normalizer(), "pre_tokenizer": null,
            "model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "ab c", "▁ ab"], "byte_fallback": true, "unk_token": "<unk>"}
        });
        Tokenizer::from_json(json.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn merges_by_rank_with_byte_fallback_and_specials() {
        let t = toy();
        // "▁abc": `a b` (rank 0) first, then `ab c` (rank 1) beats `▁ ab` (rank 2).
        assert_eq!(t.encode("abc"), vec![2, 7]);
        assert_eq!(t.encode("ab"), vec![8]);
        // é is not a piece: its two UTF-8 bytes.
        let e = t.encode("é");
        assert_eq!(e.len(), 3, "{e:?}");
        // A literal special token is its id; each side is normalized alone.
        assert_eq!(t.encode("ab<s>ab"), vec![8, 1, 8]);
        assert!(t.encode("").is_empty());
    }

    #[test]
    fn refuses_what_it_does_not_implement() {
        let json = serde_json::json!({"normalizer": null, "pre_tokenizer": null,
            "model": {"type": "Unigram", "vocab": {}, "merges": []}});
        let err = Tokenizer::from_json(json.to_string().as_bytes()).unwrap_err();
        assert!(err.contains("Unigram"), "{err}");
        assert!(
            Tokenizer::from_json(b"{")
                .unwrap_err()
                .contains("not a tokenizer.json")
        );
    }
}
