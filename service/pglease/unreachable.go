package pglease

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// unreachable tells whether err says the database cannot be reached now,
// as opposed to refusing us: a network error, a timeout (a silent host),
// a failed connection, or a PostgreSQL connection exception (SQLSTATE
// class 08), "cannot connect now" or a shutdown (57P01..57P03). Only then
// does a restart resume its hold without the database: any other error
// (the table gone, a permission taken away) may mean the claims are gone.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ne) || errors.As(err, &ce) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimedOut)
}
