//! A single-consumer event queue that never blocks its producer: when full it
//! drops the oldest item, and a final item closes it. Both live transports
//! (ACP events, PTY output) feed the WebSocket relay through one of these, so a
//! slow or absent browser can never stall an agent.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::Notify;

/// Items that can end a stream.
pub trait Final {
    /// Whether this is the last item (the transport stopped).
    fn is_final(&self) -> bool;
}

/// The queue; `capacity` items are kept before the oldest is dropped.
#[derive(Debug)]
pub struct Queue<T> {
    items: Mutex<VecDeque<T>>,
    capacity: usize,
    notify: Notify,
    closed: AtomicBool,
    dropped: AtomicU64,
}

impl<T: Final> Queue<T> {
    /// An empty queue holding at most `capacity` items.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            items: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            notify: Notify::new(),
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        }
    }

    /// Adds an item; a final item also closes the queue.
    pub fn push(&self, item: T) {
        let last = item.is_final();
        {
            let mut items = self
                .items
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if items.len() >= self.capacity {
                items.pop_front();
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            items.push_back(item);
        }
        if last {
            self.closed.store(true, Ordering::Release);
        }
        self.notify.notify_one();
    }

    /// The next item; `None` once the final item was read.
    pub async fn recv(&self) -> Option<T> {
        loop {
            if let Some(item) = self.try_recv() {
                return Some(item);
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
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front()
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
