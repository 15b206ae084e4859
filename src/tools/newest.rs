//! The newest files of a stream, newest first: what Glob and Grep's `files_with_matches` list.
//!
//! Why a bounded heap: both sort every match by modification time and then show a few of them;
//! keeping only the few (and counting the rest) costs memory by the request, not by the tree.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::SystemTime;

/// Keeps the `keep` newest items pushed (ties broken by `T`'s order), counting all of them.
#[derive(Debug)]
pub struct Newest<T: Ord> {
    keep: usize,
    seen: usize,
    /// A max-heap on the sort key: its top is the item that would be dropped next.
    heap: BinaryHeap<(Reverse<SystemTime>, T)>,
}

impl<T: Ord> Newest<T> {
    /// Keeps at most `keep` items (`usize::MAX`: all of them).
    pub fn new(keep: usize) -> Newest<T> {
        Newest {
            keep,
            seen: 0,
            heap: BinaryHeap::new(),
        }
    }

    pub fn push(&mut self, modified: SystemTime, item: T) {
        self.seen += 1;
        if self.keep == 0 {
            return;
        }
        self.heap.push((Reverse(modified), item));
        if self.heap.len() > self.keep {
            self.heap.pop();
        }
    }

    /// How many items were pushed in all.
    pub fn seen(&self) -> usize {
        self.seen
    }

    /// The kept items, newest first (equal times in `T`'s order).
    pub fn into_sorted(self) -> Vec<T> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|(_, item)| item)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn keeps_the_newest_in_order_and_counts_all() {
        let t = |s| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        let mut newest = Newest::new(3);
        for (s, name) in [(5, "e"), (1, "a"), (9, "z"), (9, "y"), (7, "g"), (2, "b")] {
            newest.push(t(s), name);
        }
        assert_eq!(newest.seen(), 6);
        assert_eq!(newest.into_sorted(), vec!["y", "z", "g"]);
    }
}
