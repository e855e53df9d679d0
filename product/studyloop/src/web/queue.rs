//! A single-consumer event queue that never blocks its producer: bounded in
//! items and in bytes, it drops the oldest item when full, counts the drop as a
//! gap the consumer is told about, and a final item closes it. Both live
//! transports (ACP events, PTY output) feed the WebSocket relay through one of
//! these, so a slow or absent browser can never stall an agent or grow the
//! server's memory, and never loses output silently.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::Notify;

/// Items that can end a stream.
pub trait Final {
    /// Whether this is the last item (the transport stopped).
    fn is_final(&self) -> bool;
    /// Roughly how many bytes the item holds (counted against the byte budget).
    fn bytes(&self) -> usize {
        0
    }
}

#[derive(Debug)]
struct Inner<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    /// Items dropped since the consumer last took one.
    gap: u64,
}

/// The queue; at most `capacity` items and `max_bytes` bytes are kept before
/// the oldest is dropped (one item is always kept, however large).
#[derive(Debug)]
pub struct Queue<T> {
    inner: Mutex<Inner<T>>,
    capacity: usize,
    max_bytes: usize,
    notify: Notify,
    closed: AtomicBool,
    dropped: AtomicU64,
}

impl<T: Final> Queue<T> {
    /// An empty queue holding at most `capacity` items (no byte budget).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self::with_byte_budget(capacity, usize::MAX)
    }

    /// An empty queue holding at most `capacity` items and `max_bytes` bytes.
    #[must_use]
    pub fn with_byte_budget(capacity: usize, max_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                items: VecDeque::new(),
                bytes: 0,
                gap: 0,
            }),
            capacity: capacity.max(1),
            max_bytes,
            notify: Notify::new(),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds an item; a final item also closes the queue.
    pub fn push(&self, item: T) {
        let last = item.is_final();
        let size = item.bytes();
        {
            let mut inner = self.lock();
            while !inner.items.is_empty()
                && (inner.items.len() >= self.capacity
                    || inner.bytes.saturating_add(size) > self.max_bytes)
            {
                if let Some((_, n)) = inner.items.pop_front() {
                    inner.bytes -= n;
                }
                inner.gap += 1;
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            inner.bytes += size;
            inner.items.push_back((item, size));
        }
        if last {
            self.closed.store(true, Ordering::Release);
        }
        self.notify.notify_one();
    }

    /// The next item; `None` once the final item was read.
    pub async fn recv(&self) -> Option<T> {
        self.recv_with_gap().await.map(|(_, item)| item)
    }

    /// The next item and how many items were dropped just before it.
    pub async fn recv_with_gap(&self) -> Option<(u64, T)> {
        loop {
            if let Some(next) = self.try_recv_with_gap() {
                return Some(next);
            }
            if self.closed.load(Ordering::Acquire) {
                return None;
            }
            // notify_one stores a permit when nobody waits, so no wake-up is lost.
            self.notify.notified().await;
        }
    }

    /// The next item if one is waiting.
    pub fn try_recv(&self) -> Option<T> {
        self.try_recv_with_gap().map(|(_, item)| item)
    }

    /// The next item if one is waiting, with the gap before it.
    pub fn try_recv_with_gap(&self) -> Option<(u64, T)> {
        let mut inner = self.lock();
        let (item, size) = inner.items.pop_front()?;
        inner.bytes -= size;
        Some((std::mem::take(&mut inner.gap), item))
    }

    /// Whether the final item has been pushed.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// How many items were dropped because nobody read them in time.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Item(usize, bool);

    impl Final for Item {
        fn is_final(&self) -> bool {
            self.1
        }
        fn bytes(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn byte_budget_drops_the_oldest_and_reports_the_gap_once() {
        let q = Queue::with_byte_budget(100, 10);
        for n in [4, 4, 4, 4] {
            q.push(Item(n, false));
        }
        assert_eq!(q.dropped(), 2);
        assert_eq!(q.try_recv_with_gap(), Some((2, Item(4, false))));
        assert_eq!(q.try_recv_with_gap(), Some((0, Item(4, false))));
        q.push(Item(50, true));
        assert_eq!(q.try_recv_with_gap(), Some((0, Item(50, true))));
        assert!(q.is_closed());
    }
}
