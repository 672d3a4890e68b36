use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;

/// An output that keeps each write apart and tells a channel about it; with a gate,
/// every write waits until the gate opens.
#[derive(Clone)]
struct Recorder {
    writes: Arc<Mutex<Vec<Vec<u8>>>>,
    wrote: mpsc::SyncSender<()>,
    gate: Option<Arc<(Mutex<bool>, Condvar)>>,
}

impl Write for Recorder {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(gate) = &self.gate {
            let (open, opened) = &**gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = opened.wait(open).unwrap();
            }
        }
        self.writes.lock().unwrap().push(bytes.to_vec());
        let _ = self.wrote.try_send(());
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn recorder(gate: Option<Arc<(Mutex<bool>, Condvar)>>) -> (Recorder, mpsc::Receiver<()>) {
    let (wrote, told) = mpsc::sync_channel(100_000);
    let recorder = Recorder {
        writes: Arc::default(),
        wrote,
        gate,
    };
    (recorder, told)
}

/// Long enough that no test's writes happen because it ran out.
const NEVER: Duration = Duration::from_secs(3600);

fn lines(recorder: &Recorder) -> Vec<String> {
    let bytes: Vec<u8> = recorder.writes.lock().unwrap().concat();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_line_written_alone_is_written_after_the_linger_without_waiting_for_more() {
    let (output, told) = recorder(None);
    let (writer, _guard) = start_with(output.clone(), "log-test", LINGER, WAKE_AT, MAX_PENDING);
    (&writer).write_all(b"one line\n").unwrap();
    told.recv_timeout(Duration::from_secs(30))
        .expect("the line is written while the guard still lives");
    assert_eq!(lines(&output), ["one line"]);
}

#[test]
fn lines_from_many_threads_arrive_whole_and_each_threads_in_order() {
    let (output, _told) = recorder(None);
    let (writer, guard) = start_with(output.clone(), "log-test", LINGER, 4096, MAX_PENDING);
    std::thread::scope(|scope| {
        for thread in 0..8 {
            let writer = &writer;
            scope.spawn(move || {
                for n in 0..2_000 {
                    let line = format!(
                        "{{\"thread\":{thread},\"n\":{n},\"pad\":\"{}\"}}\n",
                        "x".repeat(n % 97)
                    );
                    writer.make_writer().write_all(line.as_bytes()).unwrap();
                }
            });
        }
    });
    drop(guard);
    let mut next = [0usize; 8];
    for line in lines(&output) {
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let thread = value["thread"].as_u64().unwrap() as usize;
        assert_eq!(
            value["n"].as_u64().unwrap() as usize,
            next[thread],
            "{line}"
        );
        next[thread] += 1;
    }
    assert_eq!(next, [2_000; 8]);
}

#[test]
fn a_busy_writer_writes_many_lines_a_write_and_the_rest_when_dropped() {
    let (output, _told) = recorder(None);
    let wake_at = 16 * 1024;
    let (writer, guard) = start_with(output.clone(), "log-test", NEVER, wake_at, MAX_PENDING);
    let line = [b'x'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
    for _ in 0..10_000 {
        (&writer).write_all(&line).unwrap();
    }
    // No linger ends here: what is not a full batch is written by the drop.
    drop(guard);
    let writes = output.writes.lock().unwrap().len();
    assert_eq!(lines(&output).len(), 10_000);
    assert!(
        writes <= 10_000 * line.len() / wake_at + 2,
        "{writes} writes for 10,000 lines"
    );
}

#[test]
fn a_stuck_output_holds_logging_threads_back_and_loses_nothing() {
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (output, told) = recorder(Some(gate.clone()));
    let (max_pending, line_len, count) = (1024, 16, 1_000);
    let (writer, guard) = start_with(output.clone(), "log-test", NEVER, 256, max_pending);
    let appended = Arc::new(AtomicUsize::new(0));
    let producer = {
        let appended = appended.clone();
        std::thread::spawn(move || {
            for n in 0..count {
                let line = format!("{n:0>15}\n");
                assert_eq!(line.len(), line_len);
                (&writer).write_all(line.as_bytes()).unwrap();
                appended.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    // The writer's first write is stuck at the gate; the producer goes on until the
    // pending bytes reach the bound, where it must wait.
    let bound_lines = max_pending / line_len;
    while appended.load(Ordering::SeqCst) < bound_lines {
        std::thread::yield_now();
    }
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    producer.join().unwrap();
    drop(guard);
    drop(told);
    let got = lines(&output);
    assert_eq!(got.len(), count);
    assert!(got
        .iter()
        .enumerate()
        .all(|(n, line)| line.parse::<usize>() == Ok(n)));
    let largest = output
        .writes
        .lock()
        .unwrap()
        .iter()
        .map(Vec::len)
        .max()
        .unwrap();
    assert!(
        largest <= max_pending + line_len,
        "a write of {largest} bytes"
    );
}
