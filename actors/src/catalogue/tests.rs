//! The catalogue is consistent with itself: defaults, sort keys, parameters and
//! columns name what exists.

use super::*;

#[test]
fn defaults_and_sort_keys_name_real_fields() {
    for ds in &DATASETS {
        let sort_names = ds.sort_key.iter().map(|n| n.trim_end_matches(" desc"));
        for name in ds.default_fields.iter().copied().chain(sort_names) {
            let is_field = ds.field(name).is_some();
            // index_latest sorts by the index's sort_no, which is not one of its fields.
            assert!(is_field || name == "sort_no", "{}: {name}", ds.api_name);
        }
        let date_param = ds.params.iter().any(|p| p.role.is_date());
        assert_eq!(date_param, ds.date_column.is_some(), "{}", ds.api_name);
        let index_param = ds.params.iter().any(|p| p.role == ParamRole::IndexCode);
        assert_eq!(index_param, ds.index_column.is_some(), "{}", ds.api_name);
        let history_param = ds
            .params
            .iter()
            .any(|p| matches!(p.role, ParamRole::AsOf | ParamRole::UpdatedSince));
        assert_eq!(history_param, ds.versioned.is_some(), "{}", ds.api_name);
        let versioned = ds.from.contains("{index_daily}")
            || ds.from.contains("{index_quotes}")
            || periods::UNITS
                .iter()
                .any(|unit| ds.from.contains(&periods::placeholder(unit)));
        assert_eq!(versioned, ds.versioned.is_some(), "{}", ds.api_name);
        // Fields computed on demand are never among the defaults.
        for f in ds.fields.iter().filter(|f| f.on_demand) {
            assert!(!ds.default_fields.contains(&f.name), "{}", f.name);
        }
    }
}

/// The dataset actor looks up the caller's cutoff for a query that is not delayed only
/// when an on-demand field asked for reads it: a default field must not.
#[test]
fn only_on_demand_fields_read_the_callers_cutoff() {
    for dataset in &DATASETS {
        for field in dataset.fields {
            if field.sql.contains("{cutoff}") {
                assert!(
                    field.on_demand || dataset.delayed,
                    "{}.{} reads the cutoff",
                    dataset.api_name,
                    field.name
                );
            }
        }
    }
}
