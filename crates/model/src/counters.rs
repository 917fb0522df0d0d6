//! Device→host reads and kernel launches on wgpu, counted from wgpu-core's own API log.
//!
//! wgpu-core (the native implementation behind burn's wgpu backend) logs every API call it
//! serves at the `trace` level (`api_log!`, wgpu-core 29 `src/lib.rs`): `Buffer::map_async …`
//! for each buffer mapped to be read by the host, `ComputePass::dispatch …` for each compute
//! dispatch (one kernel launch). [`install`] sets a [`log`] logger that counts those two
//! messages and drops every other record, so the counts come from the API itself, whatever
//! burn or cubecl do above it. Issue 35's checks read them: one read per decode step, and
//! launches per step that do not grow with the number of experts.
//!
//! What is not counted: CUDA (no such log), and in a browser (`webgpu`, where wgpu does not go
//! through wgpu-core). There [`install`] still succeeds, and the counts stay at zero.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Reads and launches counted since [`install`] (monotonic; subtract two snapshots).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceCounts {
    /// Buffers mapped for a host read (`Buffer::map_async`): each is one device→host read.
    pub reads: u64,
    /// Compute dispatches (`ComputePass::dispatch`, direct or indirect): kernel launches.
    pub launches: u64,
}

impl std::ops::Sub for DeviceCounts {
    type Output = DeviceCounts;

    fn sub(self, earlier: DeviceCounts) -> DeviceCounts {
        DeviceCounts {
            reads: self.reads - earlier.reads,
            launches: self.launches - earlier.launches,
        }
    }
}

static READS: AtomicU64 = AtomicU64::new(0);
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

struct Counter;

/// The first bytes of a formatted message, enough to tell the two calls apart without
/// allocating.
struct Head {
    buf: [u8; 32],
    len: usize,
}

impl std::fmt::Write for Head {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - self.len;
        let n = room.min(s.len());
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        if n < s.len() {
            // Full: stop formatting the rest of the message.
            return Err(std::fmt::Error);
        }
        Ok(())
    }
}

impl log::Log for Counter {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.target().starts_with("wgpu_core")
    }

    fn log(&self, record: &log::Record) {
        if !record.target().starts_with("wgpu_core") {
            return;
        }
        let mut head = Head {
            buf: [0; 32],
            len: 0,
        };
        let _ = write!(head, "{}", record.args());
        let head = &head.buf[..head.len];
        if head.starts_with(b"Buffer::map_async") {
            READS.fetch_add(1, Ordering::Relaxed);
        } else if head.starts_with(b"ComputePass::dispatch") {
            LAUNCHES.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn flush(&self) {}
}

static COUNTER: Counter = Counter;

/// Installs the counting logger as the process's [`log`] logger (at `trace`, the level
/// wgpu-core logs its API calls at). Returns `false` when another logger was installed first
/// (the counts then stay at zero); calling it again after a success returns `true`.
pub fn install() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let ok = log::set_logger(&COUNTER).is_ok();
        if ok {
            log::set_max_level(log::LevelFilter::Trace);
        }
        ok
    })
}

/// The counts so far (zero until [`install`] succeeds).
pub fn counts() -> DeviceCounts {
    DeviceCounts {
        reads: READS.load(Ordering::Relaxed),
        launches: LAUNCHES.load(Ordering::Relaxed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_api_calls_are_counted_and_nothing_else() {
        assert!(install());
        let before = counts();
        log::trace!(target: "wgpu_core::device::global", "Buffer::map_async Id(3) offset 0 size Some(4) op: Read");
        log::trace!(target: "wgpu_core::command::compute", "ComputePass::dispatch [4, 1, 1]");
        log::trace!(target: "wgpu_core::command::compute", "ComputePass::dispatch_indirect");
        log::trace!(target: "wgpu_core::command::compute", "ComputePass::set_pipeline");
        log::trace!(target: "my_crate", "Buffer::map_async not from wgpu");
        assert_eq!(
            counts() - before,
            DeviceCounts {
                reads: 1,
                launches: 2
            }
        );
    }
}
