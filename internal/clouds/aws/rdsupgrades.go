package aws

// rdsUpgradesSource says where rdsMajorUpgrades comes from, for the
// messages of the walk (database.Engine.Source).
const rdsUpgradesSource = `the table of RDS for PostgreSQL's major upgrade targets ("Choosing a major version for an RDS for PostgreSQL upgrade", Amazon RDS User Guide, read 2026-12-02)`

// rdsMajorUpgrades are, by the RDS for PostgreSQL minor an instance runs,
// the minors of later major versions RDS upgrades it to in one step: what
// `aws rds describe-db-engine-versions --engine postgres --engine-version
// <minor>` returns as ValidUpgradeTarget with IsMajorVersionUpgrade true,
// as the Amazon RDS User Guide's page "Choosing a major version for an RDS
// for PostgreSQL upgrade" (USER_UpgradeDBInstance.PostgreSQL.MajorVersion)
// tabulates it. RDS refuses a major upgrade to a minor it does not list
// for the running one (InvalidParameterCombination), and a major version
// alone asks for its default minor, which it may not list.
//
// Read on 2026-12-02, from what could be confirmed of the page:
//   - 13.1 to 13.11 and 14.1 to 14.8: its table as of the week of
//     2023-06-09 (github.com/awsdocs/amazon-rds-user-guide,
//     doc_source/USER_UpgradeDBInstance.PostgreSQL.md at 50e7617, the
//     last update before the repository was archived);
//   - 15.13 and 16.1 to 16.9: the page as docs.amazonaws.cn serves it
//     (its newest minors 17.5, 16.9 and 15.13; the rows of 17 list
//     minors of 17 only, and the rest of the table could not be read).
//
// Not confirmed, so not listed: 14.9 and later, 15.1 to 15.12, 16.10 and
// later, 17. The walk refuses to upgrade from a minor not listed (a Fatal
// naming spec.parameters.version, saying to walk to a listed minor
// first), and a walk whose steps would pass one is refused before its
// first step; add a row here, from the page or from
// describe-db-engine-versions, to let it go on. RDS withdraws targets it
// deprecates: a step it refuses waits on the refusal (the instance's
// Synced condition), and the owner may take it back.
var rdsMajorUpgrades = map[string][]string{
	"13.1":  {"14.1", "14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.2":  {"14.1", "14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.3":  {"14.1", "14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.4":  {"14.1", "14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.5":  {"14.1", "14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.6":  {"14.2", "14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.7":  {"14.3", "14.4", "14.5", "14.6", "14.7", "14.8"},
	"13.8":  {"14.5", "14.6", "14.7", "14.8"},
	"13.9":  {"14.6", "14.7", "14.8"},
	"13.10": {"14.7", "14.8", "15.2"},
	"13.11": {"14.8", "15.3"},
	"14.1":  {"15.2", "15.3"},
	"14.2":  {"15.2", "15.3"},
	"14.3":  {"15.2", "15.3"},
	"14.4":  {"15.2", "15.3"},
	"14.5":  {"15.2", "15.3"},
	"14.6":  {"15.2", "15.3"},
	"14.7":  {"15.2", "15.3"},
	"14.8":  {"15.3"},
	"15.13": {"16.9", "17.5"},
	"16.1":  {"17.1", "17.2", "17.3", "17.4", "17.5"},
	"16.2":  {"17.1", "17.2", "17.3", "17.4", "17.5"},
	"16.3":  {"17.1", "17.2", "17.3", "17.4", "17.5"},
	"16.4":  {"17.1", "17.2", "17.3", "17.4", "17.5"},
	"16.5":  {"17.1", "17.2", "17.3", "17.4", "17.5"},
	"16.6":  {"17.2", "17.3", "17.4", "17.5"},
	"16.7":  {"17.3", "17.4", "17.5"},
	"16.8":  {"17.4", "17.5"},
	"16.9":  {"17.5"},
}
