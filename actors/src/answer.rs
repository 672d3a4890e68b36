//! [`EagerReply`]: a handler's reply that is sent at once when its future is ready on the
//! first poll (a key or a page in memory), and runs as a task of its own only when it
//! has to wait (a lookup that goes to the database).
//!
//! actix's `ResponseFuture` always spawns a task for the reply; for the AuthActor's and
//! the DatasetActor's cache hits, which are ready at once, that task (its allocation,
//! its turn in the thread's queue, its extra poll) cost as much as the answer itself.
//!
//! It must never block, lose a wake-up, or let one reply's panic take the actor down:
//! the first poll is an ordinary poll with a
//! waker that does nothing, and a future not ready then is moved into a task whose
//! first poll follows at once and registers the task's own waker (a future must use
//! the waker of its latest poll, so whatever it waits for wakes the task).

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use actix::dev::{MessageResponse, OneshotSender};
use actix::{Actor, Message};

pub struct EagerReply<T>(Pin<Box<dyn Future<Output = T>>>);

impl<T> EagerReply<T> {
    pub fn new(future: impl Future<Output = T> + 'static) -> Self {
        EagerReply(Box::pin(future))
    }
}

impl<A, M, T> MessageResponse<A, M> for EagerReply<T>
where
    A: Actor,
    M: Message<Result = T>,
    T: 'static,
{
    fn handle(self, _: &mut A::Context, tx: Option<OneshotSender<T>>) {
        let mut future = self.0;
        let reply = |tx: Option<OneshotSender<T>>, answer| {
            // A sender that stopped waiting (a dropped request) needs no answer.
            if let Some(tx) = tx {
                let _ = tx.send(answer);
            }
        };
        let first = catch_unwind(AssertUnwindSafe(|| {
            future
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
        }));
        match first {
            Ok(Poll::Ready(answer)) => reply(tx, answer),
            Ok(Poll::Pending) => {
                actix::spawn(async move { reply(tx, future.await) });
            }
            // As a spawned reply's panic would end only its task: the sender gets a
            // closed channel (a mailbox error, 50000 for a request), and the actor
            // lives on for the next message instead of unwinding with this one.
            Err(_) => drop(tx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EagerReply;
    use actix::prelude::*;

    struct Echo;

    impl Actor for Echo {
        type Context = Context<Self>;
    }

    /// Answered at once, or after a wake-up from another task, or never (a panic).
    struct Ask {
        wait_for: Option<tokio::sync::oneshot::Receiver<u32>>,
        panics: bool,
    }

    impl actix::Message for Ask {
        type Result = u32;
    }

    fn ask(wait_for: Option<tokio::sync::oneshot::Receiver<u32>>, panics: bool) -> Ask {
        Ask { wait_for, panics }
    }

    impl Handler<Ask> for Echo {
        type Result = EagerReply<u32>;

        fn handle(&mut self, msg: Ask, _: &mut Self::Context) -> EagerReply<u32> {
            EagerReply::new(async move {
                assert!(!msg.panics, "a bug in a reply");
                match msg.wait_for {
                    Some(value) => value.await.unwrap_or(0),
                    None => 7,
                }
            })
        }
    }

    #[actix::test]
    async fn a_ready_answer_and_one_that_waits_both_arrive() {
        let echo = Echo.start();
        assert_eq!(echo.send(ask(None, false)).await.unwrap(), 7);
        // Not ready on the first poll: the value comes from this task afterwards, so
        // the answer arrives only if the waiting future woke its own task.
        let (give, wait_for) = tokio::sync::oneshot::channel();
        let asked = echo.send(ask(Some(wait_for), false));
        let answer = actix::spawn(asked);
        tokio::task::yield_now().await;
        give.send(42).unwrap();
        let answer = tokio::time::timeout(std::time::Duration::from_secs(30), answer);
        assert_eq!(answer.await.expect("answered").unwrap().unwrap(), 42);
    }

    #[actix::test]
    async fn a_reply_that_panics_fails_its_sender_and_the_actor_answers_the_next() {
        let echo = Echo.start();
        assert!(echo.send(ask(None, true)).await.is_err());
        assert_eq!(echo.send(ask(None, false)).await.unwrap(), 7);
    }
}
