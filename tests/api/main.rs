//! Black-box tests of the running service: each test spawns the real application on a
//! random port against its own fresh PostgreSQL database and talks HTTP to it.

mod child;
mod cli;
mod helpers;

mod back_office;
mod browser_smoke;
mod calendar;
mod composite;
mod compression;
mod cors;
mod csv_answers;
mod datasets;
mod deep_pages;
mod deploy_manifests;
mod docs;
mod embedded;
mod envelope;
mod faults;
mod fleet;
mod head_requests;
mod health;
mod hostile;
mod import_command;
mod imports;
mod keys;
mod membership;
mod metrics;
mod openapi;
mod otlp;
mod paging;
mod point_in_time;
mod python_client;
mod python_run;
mod python_venv;
mod quota;
mod quota_account;
mod quota_instances;
mod schemathesis;
mod secrets;
mod shutdown;
mod site;
mod spread;
mod traces;
mod validation;
mod visitor;
