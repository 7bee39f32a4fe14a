// Package generatorsuite holds, in its tests only, the suite of package
// service/segment's Generator run against every real store (SQLite and
// PostgreSQL): allocation, churn, the end of int64, ranges, outages, and
// BenchmarkSegment. It lives in the stores' module so that the light
// module (service/segment itself) links no database driver, even in its
// tests; service/segment's own tests use an in-memory store.
package generatorsuite
