//! Runs the merge lane's independent runner processes a few at a time (issue #15 item 3):
//! a bounded pool of scoped threads whose tasks start in order, each only after the
//! caller's `start` (on the calling thread, so clock reads and progress stay in one
//! place) says there is time for it.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc;

/// Runs `tasks` at most `workers` at a time (at least one), starting them in order. Before
/// each task starts, `start` is asked on this thread: `Some(ready)` starts it with `ready`,
/// `None` starts neither it nor any task after it (the lane's time is up). Returns each
/// task's result by its place; `None` for a task never started. A task that panics
/// panics here, after the others ended.
pub(crate) fn run<T, S, R>(
    tasks: Vec<T>,
    workers: usize,
    mut start: impl FnMut(&T) -> Option<S>,
    task: impl Fn(T, S) -> R + Sync,
) -> Vec<Option<R>>
where
    T: Send,
    S: Send,
    R: Send,
{
    let workers = workers.max(1);
    let mut results: Vec<Option<R>> = std::iter::repeat_with(|| None).take(tasks.len()).collect();
    let task = &task;
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel();
        let mut running = 0;
        let mut panicked = None;
        let mut collect = |results: &mut Vec<Option<R>>, running: &mut usize| {
            // Every started task sends exactly once (its panic included), so this returns.
            if let Ok((index, result)) = receiver.recv() {
                *running -= 1;
                match result {
                    Ok(value) => results[index] = Some(value),
                    Err(payload) => panicked = Some(payload),
                }
            }
        };
        for (index, item) in tasks.into_iter().enumerate() {
            if running == workers {
                collect(&mut results, &mut running);
            }
            let Some(ready) = start(&item) else {
                break;
            };
            let sender = sender.clone();
            running += 1;
            scope.spawn(move || {
                let result = catch_unwind(AssertUnwindSafe(|| task(item, ready)));
                let _ = sender.send((index, result));
            });
        }
        while running > 0 {
            collect(&mut results, &mut running);
        }
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
    });
    results
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    use super::*;

    /// Waits until `count` tasks are inside at once; false when they never are (bounded
    /// so that a pool that runs them one by one fails the test instead of hanging it).
    struct Rendezvous {
        inside: Mutex<usize>,
        changed: Condvar,
    }

    impl Rendezvous {
        fn meet(&self, count: usize) -> bool {
            let mut inside = self
                .inside
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *inside += 1;
            self.changed.notify_all();
            let (inside, waited) = self
                .changed
                .wait_timeout_while(inside, Duration::from_secs(30), |n| *n < count)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            drop(inside);
            !waited.timed_out()
        }
    }

    #[test]
    fn tasks_run_together_up_to_the_worker_count_and_results_keep_their_place() {
        let rendezvous = Rendezvous {
            inside: Mutex::new(0),
            changed: Condvar::new(),
        };
        let at_once = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let results = run(
            vec![1, 2, 3, 4],
            2,
            |_| Some(()),
            |n, ()| {
                let now = at_once.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // The first two meet: they ran at the same time.
                let met = n > 2 || rendezvous.meet(2);
                at_once.fetch_sub(1, Ordering::SeqCst);
                (n * 10, met)
            },
        );
        assert_eq!(
            results,
            [
                Some((10, true)),
                Some((20, true)),
                Some((30, true)),
                Some((40, true))
            ]
        );
        assert_eq!(
            most.load(Ordering::SeqCst),
            2,
            "never more than the workers"
        );
    }

    #[test]
    fn one_worker_runs_one_task_at_a_time_in_order() {
        let order = Mutex::new(Vec::new());
        let at_once = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        run(
            vec!['a', 'b', 'c'],
            1,
            |_| Some(()),
            |c, ()| {
                let now = at_once.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                order
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(c);
                at_once.fetch_sub(1, Ordering::SeqCst);
            },
        );
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert_eq!(
            *order
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            ['a', 'b', 'c']
        );
    }

    #[test]
    fn a_refused_start_stops_that_task_and_every_later_one() {
        let mut asked = Vec::new();
        let results = run(
            vec![1, 2, 3, 4],
            2,
            |n| {
                asked.push(*n);
                (*n < 3).then_some(())
            },
            |n, ()| n,
        );
        assert_eq!(results, [Some(1), Some(2), None, None]);
        assert_eq!(asked, [1, 2, 3], "nothing after the refusal is asked");
    }
}
