//! Progress of loading a model: each stage (verifying the file, the tokenizer, the weights)
//! reports how many of its bytes are done to a callback the caller passes in. Reports are
//! throttled, at most one per whole percent and per [`REPORT_EVERY`], so reading a 1 GB
//! file costs a few dozen reports, not one per read.

use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::protocol::{LoadProgress, LoadStage};

/// Where a load's progress goes. `Sync` because safetensors weights are counted inside a
/// candle `VarBuilder` backend, which must be.
pub type ProgressSink<'a> = &'a (dyn Fn(LoadProgress) + Sync);

/// A sink for callers that show no progress.
pub fn ignore(_: LoadProgress) {}

/// The shortest time between two reports of one stage; its start and end always go out.
pub const REPORT_EVERY: Duration = Duration::from_millis(100);

/// Reads through a [`CountedRead`] go in pieces of at most this many bytes, so that one
/// big tensor (the embedding is a quarter of a small model) still moves the count.
const READ_PIECE: usize = 8 << 20;

/// A stage with no measure: it only says that it runs now.
pub fn report_stage(sink: ProgressSink<'_>, stage: LoadStage) {
    sink(LoadProgress { stage, done: 0, total: 0 });
}

/// One measured stage being counted: reports `0 / total` when it starts, then as bytes are
/// done (throttled), and `total / total` on [`StageProgress::finish`].
pub struct StageProgress<'a> {
    sink: ProgressSink<'a>,
    stage: LoadStage,
    total: u64,
    every: Duration,
    counted: Mutex<Counted>,
}

struct Counted {
    done: u64,
    /// The `done` and the time of the last report.
    reported: u64,
    reported_at: Instant,
}

impl<'a> StageProgress<'a> {
    pub fn start(sink: ProgressSink<'a>, stage: LoadStage, total: u64) -> Self {
        Self::with_interval(sink, stage, total, REPORT_EVERY)
    }

    /// [`StageProgress::start`] with another shortest time between reports (tests use
    /// zero, so that only the percent throttles).
    pub fn with_interval(sink: ProgressSink<'a>, stage: LoadStage, total: u64, every: Duration) -> Self {
        sink(LoadProgress { stage, done: 0, total });
        Self { sink, stage, total, every, counted: Mutex::new(Counted { done: 0, reported: 0, reported_at: Instant::now() }) }
    }

    /// `bytes` more are done (counted up to the total: a tensor read twice counts once).
    pub fn advance(&self, bytes: u64) {
        let mut counted = self.counted.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        counted.done = counted.done.saturating_add(bytes).min(self.total);
        let progress = LoadProgress { stage: self.stage, done: counted.done, total: self.total };
        let last = LoadProgress { done: counted.reported, ..progress };
        if progress.percent() > last.percent() && counted.reported_at.elapsed() >= self.every {
            counted.reported = counted.done;
            counted.reported_at = Instant::now();
            (self.sink)(progress);
        }
    }

    /// The stage is over: reports it complete (unless that was its last report already).
    pub fn finish(self) {
        let counted = self.counted.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        if counted.reported < self.total {
            (self.sink)(LoadProgress { stage: self.stage, done: self.total, total: self.total });
        }
    }
}

/// A reader that counts the bytes read through it into a stage.
pub struct CountedRead<'p, 'a, R> {
    inner: R,
    progress: &'p StageProgress<'a>,
}

impl<'p, 'a, R> CountedRead<'p, 'a, R> {
    pub fn new(inner: R, progress: &'p StageProgress<'a>) -> Self {
        Self { inner, progress }
    }
}

impl<R: Read> Read for CountedRead<'_, '_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let piece = buf.len().min(READ_PIECE);
        let n = self.inner.read(&mut buf[..piece])?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

impl<R: Seek> Seek for CountedRead<'_, '_, R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// Reads a real file of `size` bytes through a counted reader in `chunk`-byte reads;
    /// returns the reports.
    fn read_file(size: usize, chunk: usize, every: Duration) -> Vec<LoadProgress> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("weights.bin");
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        std::fs::File::create(&path).unwrap().write_all(&data).unwrap();
        let reports = Mutex::new(Vec::new());
        let sink = |p: LoadProgress| reports.lock().unwrap().push(p);
        let progress = StageProgress::with_interval(&sink, LoadStage::Weights, size as u64, every);
        let mut reader = CountedRead::new(std::fs::File::open(&path).unwrap(), &progress);
        let mut back = Vec::new();
        let mut buf = vec![0u8; chunk];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            back.extend_from_slice(&buf[..n]);
        }
        assert_eq!(back, data, "the counted reader changed the bytes");
        progress.finish();
        reports.into_inner().unwrap()
    }

    #[test]
    fn reports_at_most_once_per_percent_from_start_to_end() {
        // 100 000 bytes in 97-byte reads: 1031 reads, one report per percent.
        let reports = read_file(100_000, 97, Duration::ZERO);
        let percents: Vec<u64> = reports.iter().map(|p| p.percent().unwrap()).collect();
        assert_eq!(percents, (0..=100).collect::<Vec<_>>());
        assert_eq!(reports.first(), Some(&LoadProgress { stage: LoadStage::Weights, done: 0, total: 100_000 }));
        assert_eq!(reports.last(), Some(&LoadProgress { stage: LoadStage::Weights, done: 100_000, total: 100_000 }));
        assert!(reports.windows(2).all(|w| w[0].done < w[1].done), "{reports:?}");
    }

    #[test]
    fn the_interval_holds_back_reports_in_between() {
        // A read of the whole file takes far less than an hour: only the start and the end.
        let reports = read_file(100_000, 97, Duration::from_secs(3600));
        let done: Vec<u64> = reports.iter().map(|p| p.done).collect();
        assert_eq!(done, vec![0, 100_000]);
    }

    #[test]
    fn big_reads_are_cut_into_pieces_that_move_the_count() {
        // One read of 20 MB still reports in between (pieces of 8 MB).
        let reports = read_file(20 << 20, 20 << 20, Duration::ZERO);
        let done: Vec<u64> = reports.iter().map(|p| p.done).collect();
        assert_eq!(done, vec![0, 8 << 20, 16 << 20, 20 << 20]);
    }

    #[test]
    fn counting_stops_at_the_total_and_finish_reports_once() {
        let reports = Mutex::new(Vec::new());
        let sink = |p: LoadProgress| reports.lock().unwrap().push(p);
        let progress = StageProgress::with_interval(&sink, LoadStage::Verifying, 10, Duration::ZERO);
        progress.advance(6);
        progress.advance(6);
        progress.finish();
        let done: Vec<u64> = reports.into_inner().unwrap().iter().map(|p| p.done).collect();
        assert_eq!(done, vec![0, 6, 10]);
    }
}
