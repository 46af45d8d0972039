//! CPU-bound work split across the machine's cores, results in the input's order.
//!
//! A plan of thousands of resources has stretches where skyplan computes and nothing else
//! happens — the config is parsed before any request can go out, and the targets are compared
//! after the last answer is in. Those stretches run on every core; everything else stays on
//! the caller's thread.

/// `f` of each item, in the items' order, on up to as many scoped threads as the machine has
/// cores, each taking a run of at least `min_per_thread` items: a thread costs more than a few
/// small items. A panic in `f` is resumed on the calling thread.
pub fn map_in_parallel<T, R>(
    items: Vec<T>,
    min_per_thread: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R>
where
    T: Send,
    R: Send,
{
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let run_length = items.len().div_ceil(cores).max(min_per_thread.max(1));
    if items.len() <= run_length {
        return items.into_iter().map(f).collect();
    }
    let mut runs = into_runs(items, run_length);
    let last = runs.pop().expect("at least one run");
    let f = &f;
    std::thread::scope(|scope| {
        let threads: Vec<_> = runs
            .into_iter()
            .map(|run| scope.spawn(move || run.into_iter().map(f).collect::<Vec<R>>()))
            .collect();
        // The calling thread takes the last run instead of waiting idle.
        let last: Vec<R> = last.into_iter().map(f).collect();
        let mut results = Vec::new();
        for thread in threads {
            let done = thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            results.extend(done);
        }
        results.extend(last);
        results
    })
}

/// `items` cut into consecutive runs of `run_length` (the last may be shorter).
fn into_runs<T>(mut items: Vec<T>, run_length: usize) -> Vec<Vec<T>> {
    let mut runs = Vec::with_capacity(items.len().div_ceil(run_length));
    while items.len() > run_length {
        let rest = items.split_off(run_length);
        runs.push(std::mem::replace(&mut items, rest));
    }
    runs.push(items);
    runs
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn results_keep_the_items_order_and_use_every_core() {
        let threads = Mutex::new(HashSet::new());
        let doubled = map_in_parallel((0..1000).collect(), 10, |i: u32| {
            threads.lock().unwrap().insert(std::thread::current().id());
            i * 2
        });
        assert_eq!(doubled, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(threads.lock().unwrap().len(), cores.min(100));
    }

    #[test]
    fn a_few_items_stay_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let threads = map_in_parallel(vec![1, 2, 3], 10, |_| std::thread::current().id());
        assert_eq!(threads, vec![caller; 3]);
    }

    #[test]
    fn runs_are_consecutive_and_cover_every_item() {
        let runs = into_runs((0..10).collect::<Vec<u8>>(), 4);
        assert_eq!(runs, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]);
        assert_eq!(into_runs(Vec::<u8>::new(), 4), vec![Vec::<u8>::new()]);
    }

    #[test]
    #[should_panic(expected = "item 7")]
    fn a_panic_reaches_the_caller() {
        map_in_parallel((0..100).collect(), 10, |i: u32| {
            assert_ne!(i, 7, "item 7");
        });
    }
}
