//! The database: a CloudNativePG cluster with a standby, whose connections hold the
//! whole fleet at its largest (autoscaler maximum plus surge) with a reserve to spare.

use iq_actors::db::PoolSettings;

use super::objects::{config, deployment, number, object};

/// Database connections kept free of the fleet: PostgreSQL's superuser reserve (3),
/// the operator, the streaming replica and an administrator's psql.
const CONNECTION_RESERVE: u64 = 20;
/// Connections of one pod besides its pool: the change listener, and the migrations'
/// own connection at start-up.
const CONNECTIONS_OUTSIDE_THE_POOL: u64 = 2;

#[test]
fn the_fleet_fits_in_the_databases_connections() {
    iq_test_support::require!(Python);
    let cluster = object("postgres", "Cluster", "iq-db");
    assert!(
        number(&cluster["spec"]["instances"], "instances") >= 2,
        "a standby to fail over to"
    );
    let initdb = &cluster["spec"]["bootstrap"]["initdb"];
    assert_eq!(initdb["database"], "iq");
    assert_eq!(initdb["owner"], "iq");
    let max_connections: u64 = cluster["spec"]["postgresql"]["parameters"]["max_connections"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("max_connections is set");

    let hpa = object(".", "HorizontalPodAutoscaler", "iq-service");
    let surge = number(
        &deployment()["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "maxSurge (a number of pods)",
    );
    let pods = number(&hpa["spec"]["maxReplicas"], "maxReplicas") + surge;
    let pool = config()
        .get("DB_POOL_SIZE")
        .map_or(PoolSettings::default().max_size as u64, |v| {
            v.parse().unwrap()
        });
    let fleet = pods * (pool + CONNECTIONS_OUTSIDE_THE_POOL);
    assert!(
        fleet + CONNECTION_RESERVE <= max_connections,
        "{pods} pods x ({pool} + {CONNECTIONS_OUTSIDE_THE_POOL}) connections = {fleet}, plus \
         a reserve of {CONNECTION_RESERVE}, exceed max_connections {max_connections}"
    );
}
