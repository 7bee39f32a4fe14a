package etcdlease

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Layout is the key of the fleet's layout record (no lease, never deleted).
func (k Keys) Layout() string { return k.Prefix + "/layout" }

// SwapLayout puts rec under the layout key if it holds old (nil: absent): one transaction.
func (b *backend) SwapLayout(ctx context.Context, old, rec []byte) ([]byte, error) {
	key := b.keys.Layout()
	cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	if old != nil {
		cmp = clientv3.Compare(clientv3.Value(key), "=", string(old))
	}
	resp, err := b.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(rec))).Else(clientv3.OpGet(key)).Commit()
	switch {
	case err != nil:
		return nil, b.unavailable(ctx, "reading the fleet's layout "+key, err)
	case resp.Succeeded:
		return rec, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
		return kvs[0].Value, nil
	}
	return nil, nil
}
