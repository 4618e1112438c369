//! A small thread pool for the CPU forward pass: the calling thread and `threads - 1`
//! workers split each parallel step into chunks taken from a shared counter.
//!
//! Why not rayon or candle's pool: a decode step is ~150 short parallel steps (one per
//! matrix product or attention), and a hand-off that sleeps and wakes a thread costs tens
//! of microseconds each time; `perf` showed a third of decode time there. Workers here spin
//! briefly between steps (the next one comes within microseconds) and park after that, so an
//! idle model costs no CPU. Chunks are claimed dynamically, so a worker the OS has
//! descheduled (a loaded machine) delays nothing: the caller takes its chunks.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a worker spins for the next step before it parks.
const SPIN: Duration = Duration::from_micros(300);

type Task = dyn Fn(usize) + Sync;

/// A counter on a cache line of its own: the claim counter and the done counter are
/// written by different threads, and sharing a line made every claim a cross-core miss.
#[repr(align(128))]
struct Padded(AtomicUsize);

/// One parallel step: `n` chunks, the function that runs chunk `i`.
struct Job {
    /// Valid while chunks remain unclaimed: `run` returns only after every chunk is done,
    /// and a chunk is run only after it is claimed.
    task: *const Task,
    n: usize,
    next: Padded,
    done: Padded,
    panicked: AtomicBool,
}

// SAFETY: `task` points to a `Sync` closure that outlives every use (see `Job::task`).
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    /// Claims and runs chunks until none are left.
    fn work(&self) {
        loop {
            let i = self.next.0.fetch_add(1, Ordering::Relaxed);
            if i >= self.n {
                return;
            }
            // SAFETY: chunk `i` is claimed and not done, so `run` is still waiting and the
            // closure is alive.
            let task = unsafe { &*self.task };
            if catch_unwind(AssertUnwindSafe(|| task(i))).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.done.0.fetch_add(1, Ordering::Release);
        }
    }
}

struct Shared {
    /// Bumped for each new job.
    generation: AtomicUsize,
    job: Mutex<Option<Arc<Job>>>,
    parked: Mutex<usize>,
    wake: Condvar,
    shutdown: AtomicBool,
}

pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

/// A chunk panicked (a bug): the step's outputs are incomplete.
#[derive(Debug, thiserror::Error)]
#[error("a parallel step of the forward pass failed")]
pub struct StepFailed;

impl Pool {
    /// A pool that runs steps on `threads` threads in all (the caller included).
    pub fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            generation: AtomicUsize::new(0),
            job: Mutex::new(None),
            parked: Mutex::new(0),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
        });
        let workers = (1..threads.max(1))
            .filter_map(|i| {
                let shared = shared.clone();
                std::thread::Builder::new().name(format!("b4-forward-{i}")).spawn(move || worker(&shared)).ok()
            })
            .collect();
        Self { shared, workers }
    }

    /// Threads that run a step (the caller included).
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `task(i)` for every `i` in `0..n` across the pool and returns when all are done.
    pub fn run(&self, n: usize, task: &(dyn Fn(usize) + Sync)) -> Result<(), StepFailed> {
        if n == 0 {
            return Ok(());
        }
        // SAFETY (lifetime erasure): the pointer is only dereferenced for claimed chunks,
        // and this function does not return before every chunk is done.
        let task: *const Task = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), &'static Task>(task) };
        let job = Arc::new(Job { task, n, next: Padded(AtomicUsize::new(0)), done: Padded(AtomicUsize::new(0)), panicked: AtomicBool::new(false) });
        if n > 1 && !self.workers.is_empty() {
            if let Ok(mut slot) = self.shared.job.lock() {
                *slot = Some(job.clone());
            }
            self.shared.generation.fetch_add(1, Ordering::Release);
            if self.shared.parked.lock().map(|p| *p > 0).unwrap_or(false) {
                self.shared.wake.notify_all();
            }
        }
        job.work();
        let mut spins = 0u32;
        while job.done.0.load(Ordering::Acquire) < n {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if job.panicked.load(Ordering::Relaxed) {
            return Err(StepFailed);
        }
        Ok(())
    }
}

fn worker(shared: &Shared) {
    let mut seen = shared.generation.load(Ordering::Acquire);
    loop {
        let since = Instant::now();
        let mut spins = 0u32;
        loop {
            if shared.shutdown.load(Ordering::Relaxed) {
                return;
            }
            let generation = shared.generation.load(Ordering::Acquire);
            if generation != seen {
                seen = generation;
                break;
            }
            spins += 1;
            if spins % 64 != 0 {
                std::hint::spin_loop();
                continue;
            }
            if since.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            // Park until the next job; the generation is re-checked under the lock the
            // caller takes before notifying, so a wake-up cannot be missed.
            let Ok(mut parked) = shared.parked.lock() else { return };
            *parked += 1;
            while shared.generation.load(Ordering::Acquire) == seen && !shared.shutdown.load(Ordering::Relaxed) {
                parked = match shared.wake.wait(parked) {
                    Ok(p) => p,
                    Err(_) => return,
                };
            }
            *parked -= 1;
        }
        let job = shared.job.lock().ok().and_then(|j| j.clone());
        if let Some(job) = job {
            job.work();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Relaxed);
        if let Ok(_parked) = self.shared.parked.lock() {
            self.shared.wake.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A raw pointer to an output buffer that chunks write to disjoint parts of.
#[derive(Clone, Copy)]
pub struct SharedOut(*mut f32, usize);

// SAFETY: chunks write disjoint index ranges (the callers' contract), so sharing the
// pointer across the pool's threads does not race.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    pub fn new(buf: &mut [f32]) -> Self {
        Self(buf.as_mut_ptr(), buf.len())
    }

    /// The part `range` of the buffer.
    ///
    /// # Safety
    /// No two live slices from the same buffer may overlap, and the buffer must outlive them.
    // Handing out disjoint mutable parts of one buffer to the pool's threads is this type's
    // whole job; the contract above is what makes it sound.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice(&self, range: std::ops::Range<usize>) -> &mut [f32] {
        let end = range.end.min(self.1);
        let start = range.start.min(end);
        // SAFETY: in bounds (clamped above); disjointness and lifetime are the caller's.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), end - start) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_runs_once_across_many_steps() {
        let pool = Pool::new(3);
        for step in 0..2000usize {
            let n = step % 37 + 1;
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            pool.run(n, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "step {step}");
        }
    }

    #[test]
    fn workers_wake_after_parking() {
        let pool = Pool::new(2);
        std::thread::sleep(SPIN * 4);
        let sum = AtomicUsize::new(0);
        pool.run(100, &|i| {
            sum.fetch_add(i, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
    }

    #[test]
    fn a_panicking_chunk_is_an_error_not_a_hang() {
        let pool = Pool::new(2);
        let r = pool.run(8, &|i| {
            if i == 5 {
                panic!("chunk 5");
            }
        });
        assert!(r.is_err());
        // The pool still works afterwards.
        pool.run(4, &|_| {}).unwrap();
    }
}
