//! What a response reports of the quota (D6, D11): per window, the limit, the calls
//! left and the seconds to reset, and which window binds.
//!
//! A call is charged to two subjects, its key and its owner's account (D11), each with
//! a minute and a day. [`Status`] keeps the shape the headers are rendered from (one
//! minute, one day): each is the *tighter* of the key's and the account's windows of
//! that length, so [`Status::binding`] picks among all four. Pure: never counts or
//! refuses anything itself.

use super::window::Window;

/// One window as a response reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStatus {
    pub window: Window,
    pub limit: i64,
    pub remaining: i64,
    /// Seconds until the window resets.
    pub reset: i64,
}

impl WindowStatus {
    /// The window with fewer calls left; `self` on a tie. Only windows of one length
    /// are compared here, and those reset at the same instant, so "the one that resets
    /// first" (D11) cannot separate them: the first (the key's) is kept.
    fn tighter(self, other: WindowStatus) -> WindowStatus {
        if other.remaining < self.remaining {
            other
        } else {
            self
        }
    }
}

/// Both windows as a response reports them (D6 headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub day: WindowStatus,
    pub minute: WindowStatus,
}

impl Status {
    /// The window that binds: the refusing one for a 429; otherwise the one with the
    /// fewest calls left, and on a tie the one that resets first (D11): the minute,
    /// unless both end together (the last minute of the day), then the day.
    pub fn binding(&self, refused: Option<Window>) -> WindowStatus {
        match refused {
            Some(Window::Day) => self.day,
            Some(Window::Minute) => self.minute,
            None => {
                let (day, minute) = (self.day, self.minute);
                let fewer = (minute.remaining, minute.reset) < (day.remaining, day.reset);
                if fewer {
                    minute
                } else {
                    day
                }
            }
        }
    }

    /// Per window, the tighter of `self` (the key's) and `other` (its account's): what
    /// the response reports when both subjects are charged (D11).
    pub fn tighter(self, other: Status) -> Status {
        Status {
            day: self.day.tighter(other.day),
            minute: self.minute.tighter(other.minute),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(window: Window, limit: i64, remaining: i64, reset: i64) -> WindowStatus {
        WindowStatus {
            window,
            limit,
            remaining,
            reset,
        }
    }

    fn status(minute: (i64, i64), day: (i64, i64)) -> Status {
        Status {
            minute: window(Window::Minute, minute.0, minute.1, 42),
            day: window(Window::Day, day.0, day.1, 72_000),
        }
    }

    #[test]
    fn the_window_with_fewer_calls_left_binds() {
        let s = status((10, 7), (100, 50));
        assert_eq!(s.binding(None), s.minute);
        let s = status((10, 7), (100, 3));
        assert_eq!(s.binding(None), s.day);
    }

    #[test]
    fn on_a_tie_the_window_that_resets_first_binds() {
        let s = status((10, 5), (10, 5));
        assert_eq!(s.binding(None), s.minute);
        // The last minute of the UTC day: both reset together.
        let mut s = s;
        s.day.reset = s.minute.reset;
        assert_eq!(s.binding(None), s.day);
    }

    #[test]
    fn a_refusal_reports_the_refusing_window() {
        let s = status((10, 0), (10, 0));
        assert_eq!(s.binding(Some(Window::Day)), s.day);
        assert_eq!(s.binding(Some(Window::Minute)), s.minute);
    }

    #[test]
    fn the_tighter_subject_is_reported_per_window() {
        let key = status((100, 90), (1000, 10));
        let account = status((200, 80), (2000, 600));
        let both = key.tighter(account);
        assert_eq!(both.minute, account.minute);
        assert_eq!(both.day, key.day);
        // A tie keeps the key's window (same reset, so nothing else separates them).
        let account = status((200, 90), (2000, 10));
        assert_eq!(key.tighter(account), key);
    }
}
