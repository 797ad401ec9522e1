//! Where events go once they exist, in every mode: folded into whatever
//! state watches them, appended to the session file, and forwarded to
//! whoever runs this process for a dashboard elsewhere. Live, headless and
//! remote runs all write through one `EventSink`, so an event recorded is
//! exactly an event folded, and a failing file or link is reported the
//! same way everywhere.

use std::io::Write;

use super::event::Stamped;
use super::recorder::Recorder;

/// A state that events are folded into (the session model, the screen's
/// view state). Implemented above this room.
pub trait Fold {
    fn apply(&mut self, stamped: &Stamped);
}

/// No fold: a run that only records and forwards.
impl Fold for () {
    fn apply(&mut self, _: &Stamped) {}
}

/// The session file and the forward link, each optional. A write that
/// fails closes that outlet and is reported once, as a line for the user.
#[derive(Default)]
pub struct EventSink {
    recorder: Option<Recorder>,
    forward: Option<Box<dyn Write + Send>>,
}

impl EventSink {
    pub fn new(recorder: Option<Recorder>, forward: Option<Box<dyn Write + Send>>) -> EventSink {
        EventSink { recorder, forward }
    }

    /// Folds `s` into `fold`, records it and forwards it. Returns what
    /// stopped working because of this event, one line each.
    pub fn put(&mut self, s: &Stamped, fold: &mut dyn Fold) -> Vec<String> {
        let mut stopped = Vec::new();
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.append(s)
        {
            stopped.push(format!("recording stopped: {e}"));
            self.recorder = None;
        }
        if let Some(w) = self.forward.as_mut() {
            let sent = serde_json::to_writer(&mut *w, s).is_ok()
                && w.write_all(b"\n").is_ok()
                && w.flush().is_ok();
            if !sent {
                stopped.push("the worker stopped taking events".into());
                self.forward = None;
            }
        }
        fold.apply(s);
        stopped
    }

    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    /// Ends the current recording (the file is complete); `r` starts another.
    pub fn take_recorder(&mut self) -> Option<Recorder> {
        self.recorder.take()
    }

    pub fn set_recorder(&mut self, r: Recorder) {
        self.recorder = Some(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::{Bookmark, Event};

    struct Count(usize);
    impl Fold for Count {
        fn apply(&mut self, _: &Stamped) {
            self.0 += 1;
        }
    }

    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("pipe closed"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn mark(t_us: u64) -> Stamped {
        Stamped {
            t_us,
            event: Event::Bookmark(Bookmark { label: "b".into() }),
        }
    }

    #[test]
    fn an_event_is_folded_recorded_and_forwarded_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let shared = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        struct Tee(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Tee {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut sink = EventSink::new(
            Some(Recorder::create(&path).unwrap()),
            Some(Box::new(Tee(shared.clone()))),
        );
        let mut folded = Count(0);
        let header = Stamped {
            t_us: 0,
            event: Event::Header(crate::session::event::SessionHeader::default()),
        };
        assert!(sink.put(&header, &mut folded).is_empty());
        for t in 0..3 {
            assert!(sink.put(&mark(t), &mut folded).is_empty());
        }
        assert_eq!(folded.0, 4);
        assert_eq!(sink.recorder().unwrap().events_written(), 4);
        let forwarded = String::from_utf8(shared.lock().unwrap().clone()).unwrap();
        assert_eq!(forwarded.lines().count(), 4);
        let back: Stamped = serde_json::from_str(forwarded.lines().last().unwrap()).unwrap();
        assert_eq!(back.t_us, 2);
    }

    #[test]
    fn a_broken_link_is_reported_once_and_the_rest_goes_on() {
        let mut sink = EventSink::new(None, Some(Box::new(Broken)));
        let mut folded = Count(0);
        assert_eq!(
            sink.put(&mark(0), &mut folded),
            vec!["the worker stopped taking events".to_string()]
        );
        assert!(sink.put(&mark(1), &mut folded).is_empty());
        assert_eq!(folded.0, 2, "the fold goes on without the link");
    }
}
