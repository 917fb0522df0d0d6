//! Safetensors checkpoints: one file or shards with `model.safetensors.index.json`,
//! memory-mapped from disk or held as bytes (wasm), with every inconsistency reported by file
//! and tensor name.

use std::collections::{BTreeMap, BTreeSet};

use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorInfo};
use serde::Deserialize;

use crate::error::{ModelError, Result};

/// The bytes of one shard.
enum ShardBytes {
    #[cfg(feature = "native")]
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl ShardBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            #[cfg(feature = "native")]
            Self::Mapped(m) => m,
            Self::Owned(v) => v,
        }
    }

    /// Drops the mapped pages wholly inside `start..end` from this process's resident set once
    /// a tensor has been converted, so that loading never holds the file and the converted
    /// weights in RAM together. The mapping is read-only: a later read of those bytes simply
    /// faults them in again from the file. Owned bytes are left alone.
    fn release(&self, start: usize, end: usize) {
        #[cfg(all(feature = "native", unix))]
        if let Self::Mapped(m) = self {
            const PAGE: usize = 4096;
            let (lo, hi) = (start.div_ceil(PAGE) * PAGE, end / PAGE * PAGE);
            if hi > lo {
                // SAFETY: MADV_DONTNEED on a private read-only file mapping discards only
                // clean page-cache-backed pages; their contents are re-read from the file on
                // the next access, and nothing here holds a reference into that range.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo)
                };
            }
        }
        let _ = (start, end);
    }
}

struct Shard {
    name: String,
    bytes: ShardBytes,
    /// Start of the data section (8 + header length).
    data_start: usize,
    tensors: BTreeMap<String, TensorInfo>,
}

/// Where one tensor lives.
#[derive(Debug, Clone)]
pub struct TensorEntry {
    /// Index into the checkpoint's shards.
    shard: usize,
    /// Element type on disk.
    pub dtype: Dtype,
    /// Shape on disk.
    pub shape: Vec<usize>,
}

/// `model.safetensors.index.json`.
#[derive(Deserialize)]
struct IndexFile {
    weight_map: BTreeMap<String, String>,
}

/// A set of safetensors shards forming one checkpoint.
pub struct Checkpoint {
    shards: Vec<Shard>,
    tensors: BTreeMap<String, TensorEntry>,
    /// Things that were odd but harmless (e.g. an unlisted shard with no conflicting tensor).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("shards", &self.shard_names())
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

fn parse_shard(name: &str, bytes: ShardBytes) -> Result<Shard> {
    let (n, metadata) = SafeTensors::read_metadata(bytes.as_slice()).map_err(|e| {
        let hint = match e {
            safetensors::SafeTensorError::MetadataIncompleteBuffer
            | safetensors::SafeTensorError::InvalidHeaderLength
            | safetensors::SafeTensorError::HeaderTooSmall => "; the file looks truncated",
            _ => "",
        };
        ModelError::Safetensors {
            file: name.to_string(),
            message: format!("{e:?}{hint}"),
        }
    })?;
    let tensors = metadata
        .tensors()
        .into_iter()
        .map(|(k, v)| (k, v.clone()))
        .collect();
    Ok(Shard {
        name: name.to_string(),
        bytes,
        data_start: 8 + n,
        tensors,
    })
}

impl Checkpoint {
    /// Builds a checkpoint from shards held in memory (`(file name, bytes)`), with the text of
    /// `model.safetensors.index.json` when there is one.
    ///
    /// # Errors
    /// As [`Checkpoint::open_dir`].
    pub fn from_bytes(shards: Vec<(String, Vec<u8>)>, index: Option<&str>) -> Result<Self> {
        let mut parsed = BTreeMap::new();
        for (name, bytes) in shards {
            parsed.insert(name.clone(), (name, ShardBytes::Owned(bytes)));
        }
        Self::assemble(
            parsed.into_values().collect(),
            index,
            "model.safetensors.index.json",
        )
    }

    /// Opens a checkpoint directory: `model.safetensors.index.json` and its shards, or else every
    /// `*.safetensors` file in it. Shards are memory-mapped; nothing is copied yet.
    ///
    /// # Errors
    /// A missing or unreadable file, a shard listed in the index but absent, a tensor the index
    /// lists but its shard lacks, an unlisted shard holding a tensor the index assigns elsewhere,
    /// a truncated or malformed shard, two shards holding the same tensor without an index.
    #[cfg(feature = "native")]
    pub fn open_dir(dir: &std::path::Path) -> Result<Self> {
        let io = |path: &std::path::Path, e| ModelError::Io {
            path: path.display().to_string(),
            source: e,
        };
        let index_path = dir.join("model.safetensors.index.json");
        let index = match std::fs::read_to_string(&index_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(&index_path, e)),
        };
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".safetensors"))
            .collect();
        files.sort();
        if let Some(text) = &index {
            let listed: BTreeSet<String> = serde_json::from_str::<IndexFile>(text)
                .map(|i| i.weight_map.into_values().collect())
                .unwrap_or_default();
            if let Some(missing) = listed.iter().find(|f| !files.contains(f)) {
                let parsed: IndexFile = serde_json::from_str(text).expect("parsed above");
                let tensor = parsed
                    .weight_map
                    .iter()
                    .find(|(_, f)| *f == missing)
                    .map(|(t, _)| t);
                return Err(ModelError::Index {
                    file: index_path.display().to_string(),
                    message: format!(
                        "shard `{missing}` is listed (for tensor `{}`) but is not in {}",
                        tensor.map_or("?", String::as_str),
                        dir.display()
                    ),
                });
            }
        }
        if files.is_empty() {
            return Err(ModelError::Io {
                path: dir.display().to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no *.safetensors file in this directory",
                ),
            });
        }
        let mut shards = Vec::new();
        for name in files {
            let path = dir.join(&name);
            let file = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
            // SAFETY: the map is read-only; a checkpoint modified while mapped is the caller's
            // problem, as with every mmap-based loader (safetensors, candle, transformers).
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io(&path, e))?;
            shards.push((path.display().to_string(), ShardBytes::Mapped(map)));
        }
        Self::assemble(shards, index.as_deref(), &index_path.display().to_string())
    }

    fn assemble(
        files: Vec<(String, ShardBytes)>,
        index: Option<&str>,
        index_name: &str,
    ) -> Result<Self> {
        let index =
            match index {
                Some(text) => Some(serde_json::from_str::<IndexFile>(text).map_err(|e| {
                    ModelError::Index {
                        file: index_name.to_string(),
                        message: format!("invalid index JSON: {e}"),
                    }
                })?),
                None => None,
            };
        let base = |path: &str| path.rsplit(['/', '\\']).next().unwrap_or(path).to_string();
        let mut shards = Vec::new();
        for (name, bytes) in files {
            shards.push(parse_shard(&name, bytes)?);
        }
        let mut tensors = BTreeMap::new();
        let mut warnings = Vec::new();
        match index {
            Some(index) => {
                let listed: BTreeSet<&String> = index.weight_map.values().collect();
                for (tensor, file) in &index.weight_map {
                    let Some(si) = shards.iter().position(|s| &base(&s.name) == file) else {
                        return Err(ModelError::Index {
                            file: index_name.to_string(),
                            message: format!("shard `{file}` (for tensor `{tensor}`) is missing"),
                        });
                    };
                    let Some(info) = shards[si].tensors.get(tensor) else {
                        return Err(ModelError::MissingTensor {
                            tensor: tensor.clone(),
                            hint: format!(
                                " (the index maps it to {}, which does not hold it)",
                                shards[si].name
                            ),
                        });
                    };
                    tensors.insert(
                        tensor.clone(),
                        TensorEntry {
                            shard: si,
                            dtype: info.dtype,
                            shape: info.shape.clone(),
                        },
                    );
                }
                for shard in &shards {
                    if listed.contains(&base(&shard.name)) {
                        continue;
                    }
                    if let Some(t) = shard
                        .tensors
                        .keys()
                        .find(|t| index.weight_map.contains_key(*t))
                    {
                        return Err(ModelError::Index {
                            file: index_name.to_string(),
                            message: format!(
                                "{} is not listed in the index but holds tensor `{t}`, which the \
                                 index assigns to {}; remove the stray shard or fix the index",
                                shard.name, index.weight_map[t]
                            ),
                        });
                    }
                    warnings.push(format!(
                        "{} is not listed in the index; ignored",
                        shard.name
                    ));
                }
            }
            None => {
                for (si, shard) in shards.iter().enumerate() {
                    for (tensor, info) in &shard.tensors {
                        if let Some(prev) = tensors.get(tensor) {
                            let prev: &TensorEntry = prev;
                            return Err(ModelError::Index {
                                file: shard.name.clone(),
                                message: format!(
                                    "tensor `{tensor}` is also in {}, and there is no \
                                     model.safetensors.index.json to say which one counts",
                                    shards[prev.shard].name
                                ),
                            });
                        }
                        tensors.insert(
                            tensor.clone(),
                            TensorEntry {
                                shard: si,
                                dtype: info.dtype,
                                shape: info.shape.clone(),
                            },
                        );
                    }
                }
            }
        }
        Ok(Self {
            shards,
            tensors,
            warnings,
        })
    }

    /// Names of the shard files.
    pub fn shard_names(&self) -> Vec<String> {
        self.shards.iter().map(|s| s.name.clone()).collect()
    }

    /// Every tensor name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(String::as_str)
    }

    /// Whether the checkpoint holds `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// Where `name` lives, if present.
    pub fn entry(&self, name: &str) -> Option<&TensorEntry> {
        self.tensors.get(name)
    }

    /// Total bytes of tensor data.
    pub fn data_bytes(&self) -> u64 {
        self.shards
            .iter()
            .flat_map(|s| s.tensors.values())
            .map(|t| (t.data_offsets.1 - t.data_offsets.0) as u64)
            .sum()
    }

    /// Reads `name` as f32 values in row-major order, checking its shape.
    ///
    /// bf16 widens exactly (`bits << 16`), f16 through `half`, f32 as is.
    ///
    /// # Errors
    /// [`ModelError::MissingTensor`], [`ModelError::Shape`] or [`ModelError::Dtype`], naming the
    /// tensor and its shard.
    pub fn read_f32(&self, name: &str, expected: &[usize]) -> Result<Vec<f32>> {
        self.read_as::<f32>(name, expected)
    }

    /// The tensor `name` as a row-major `Vec<T>` (f32, bf16 or f16), after checking its shape
    /// against `expected`: the stored bytes copied where the dtypes agree, converted (rounded
    /// to nearest even when narrowing) where they do not. The file's pages are released after
    /// the read (see `release`), so loading holds one copy of each tensor at most.
    ///
    /// # Errors
    /// [`ModelError::MissingTensor`], [`ModelError::Shape`] (naming the shard) or
    /// [`ModelError::Dtype`] for a dtype other than f32, f16 or bf16.
    pub fn read_as<T: CheckpointElem>(&self, name: &str, expected: &[usize]) -> Result<Vec<T>> {
        let entry = self
            .tensors
            .get(name)
            .ok_or_else(|| ModelError::MissingTensor {
                tensor: name.to_string(),
                hint: String::new(),
            })?;
        let shard = &self.shards[entry.shard];
        if entry.shape != expected {
            return Err(ModelError::Shape {
                file: shard.name.clone(),
                tensor: name.to_string(),
                found: entry.shape.clone(),
                expected: expected.to_vec(),
            });
        }
        let info = &shard.tensors[name];
        let (start, end) = (
            shard.data_start + info.data_offsets.0,
            shard.data_start + info.data_offsets.1,
        );
        let values =
            T::decode(&shard.bytes.as_slice()[start..end], entry.dtype).ok_or_else(|| {
                ModelError::Dtype {
                    file: shard.name.clone(),
                    tensor: name.to_string(),
                    dtype: format!("{:?}", entry.dtype),
                }
            })?;
        shard.bytes.release(start, end);
        Ok(values)
    }
}

/// An element type tensors can be read into: f32, bf16 or f16.
pub trait CheckpointElem: Copy + Send + Sync + 'static {
    /// Little-endian `bytes` stored as `dtype`, as `Self`; `None` for dtypes other than f32,
    /// f16 and bf16.
    fn decode(bytes: &[u8], dtype: Dtype) -> Option<Vec<Self>>;
}

impl CheckpointElem for f32 {
    fn decode(bytes: &[u8], dtype: Dtype) -> Option<Vec<f32>> {
        decode_f32(bytes, dtype)
    }
}

/// Half-precision bytes stored as `same` are copied bit for bit; anything else goes through
/// f32.
fn decode_half<T: Copy>(
    bytes: &[u8],
    dtype: Dtype,
    same: Dtype,
    from_bits: fn(u16) -> T,
    from_f32: fn(f32) -> T,
) -> Option<Vec<T>> {
    if dtype == same {
        Some(
            bytes
                .chunks_exact(2)
                .map(|b| from_bits(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
        )
    } else {
        Some(
            decode_f32(bytes, dtype)?
                .into_iter()
                .map(from_f32)
                .collect(),
        )
    }
}

impl CheckpointElem for half::bf16 {
    fn decode(bytes: &[u8], dtype: Dtype) -> Option<Vec<Self>> {
        decode_half(
            bytes,
            dtype,
            Dtype::BF16,
            half::bf16::from_bits,
            half::bf16::from_f32,
        )
    }
}

impl CheckpointElem for half::f16 {
    fn decode(bytes: &[u8], dtype: Dtype) -> Option<Vec<Self>> {
        decode_half(
            bytes,
            dtype,
            Dtype::F16,
            half::f16::from_bits,
            half::f16::from_f32,
        )
    }
}

/// Widens little-endian bf16, f16 or f32 bytes to f32; `None` for other dtypes.
pub fn decode_f32(bytes: &[u8], dtype: Dtype) -> Option<Vec<f32>> {
    match dtype {
        Dtype::BF16 => Some(
            bytes
                .chunks_exact(2)
                .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
                .collect(),
        ),
        Dtype::F16 => Some(
            bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        ),
        Dtype::F32 => Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_widens_exactly() {
        let values = [1.0f32, -2.5, 3.0e38, 65536.0];
        let mut bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect();
        bytes.extend(half::bf16::NAN.to_le_bytes());
        let out = decode_f32(&bytes, Dtype::BF16).unwrap();
        // 3.0e38 is not a bf16 value; its nearest bf16 is what the file holds.
        assert_eq!(
            &out[..4],
            &[1.0, -2.5, half::bf16::from_f32(3.0e38).to_f32(), 65536.0]
        );
        assert!(out[4].is_nan());
        // Raw bytes written by hand: 0x3F80 = 1.0, 0xC020 = -2.5, 0x7F62 ≈ 3.0e38.
        let raw = [0x80, 0x3F, 0x20, 0xC0, 0x62, 0x7F, 0x80, 0x47, 0xC0, 0x7F];
        let out = decode_f32(&raw, Dtype::BF16).unwrap();
        assert_eq!(out[0], 1.0);
        assert_eq!(out[1], -2.5);
        assert_eq!(out[2], f32::from_bits(0x7F62_0000));
        assert!((out[2] - 3.0e38).abs() / 3.0e38 < 0.01);
        assert_eq!(out[3], 65536.0);
        assert!(out[4].is_nan());
    }

    #[test]
    fn unsupported_dtype_is_none() {
        assert!(decode_f32(&[0, 0, 0, 0], Dtype::I32).is_none());
    }
}
