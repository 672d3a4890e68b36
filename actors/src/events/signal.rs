//! The change bus's news as a number that moves: every change announced (by this
//! instance or, through `NOTIFY`, by another) moves it, and a waiter wakes. The event
//! feed's long polls wait on it instead of polling the table; the window keeper reads
//! it to know a tier's delay or the calendar may have moved a window.
//!
//! It carries no data: a waiter reads the table again to learn what changed.

use actix::prelude::*;
use tokio::sync::watch;

use crate::changes::Invalidate;

/// A target of the change bus (an actor, as every target is) that moves the number.
#[derive(Clone)]
pub struct ChangeSignal {
    sender: watch::Sender<u64>,
}

impl Default for ChangeSignal {
    fn default() -> Self {
        ChangeSignal {
            sender: watch::channel(0).0,
        }
    }
}

impl ChangeSignal {
    /// A receiver that sees the changes from now on.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.sender.subscribe()
    }

    /// Moves the number: what a change announced does.
    pub fn changed(&self) {
        self.sender.send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl Actor for ChangeSignal {
    type Context = Context<Self>;
}

impl Handler<Invalidate> for ChangeSignal {
    type Result = ();

    fn handle(&mut self, _: Invalidate, _: &mut Context<Self>) {
        self.changed();
    }
}
