// The senders: one goroutine per peer posts the outbox's queue for it in
// order, and acknowledgements and durable marks move batches along.

package peer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// requeueAcked queues again, ahead of the rest, the batches for peer that
// an incarnation older than epoch acknowledged.
func (t *HTTPTransport) requeueAcked(peer int, epoch uint64) {
	q := t.queues[peer]
	q.mu.Lock()
	var again, keep []*outItem
	for _, it := range q.acked {
		if it.ackedBy < epoch {
			again = append(again, it)
		} else {
			keep = append(keep, it)
		}
	}
	q.acked = keep
	q.items = append(again, q.items...)
	q.mu.Unlock()
	if len(again) > 0 {
		t.tr.Add(int64(len(again)))
		t.resent.Add(uint64(len(again)))
		t.logf("peer %d restarted (epoch %d): resending %d acknowledged batches", peer, epoch, len(again))
	}
	t.wake(q)
}

func (t *HTTPTransport) wake(q *peerQueue) {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Send puts b in the outbox and queues it for peer dest; it never blocks
// on the network or the disk (but for a spill beyond the outbox's share
// of memory).
func (t *HTTPTransport) Send(dest int, b *Batch) {
	t.tr.Add(1)
	q := t.queues[dest]
	q.mu.Lock()
	defer t.wake(q)
	defer q.mu.Unlock()
	t.stampLocked(q, b)
	it := &outItem{epoch: b.Epoch, seq: b.Seq}
	body, err := encodeBatchBytes(b)
	if err != nil {
		// A batch of strings and numbers always encodes; should it not,
		// its URLs are still in the node's URL log.
		t.logf("outbox: batch e%d s%d for node %d: %v (not sent)", b.Epoch, b.Seq, dest, err)
		t.tr.Add(-1)
		return
	}
	t.store.hold(it, body)
	q.items = append(q.items, it)
}

// Take removes and returns every batch held for dest (declared dead):
// unacknowledged ones and those its incarnations acknowledged. Their
// outbox files are deleted; the caller routes their URLs anew.
func (t *HTTPTransport) Take(dest int) ([]*Batch, int) {
	q := t.queues[dest]
	q.mu.Lock()
	defer q.mu.Unlock()
	items, acked := q.items, q.acked
	q.items, q.acked = nil, nil
	var out []*Batch
	for _, it := range append(items, acked...) {
		if b := t.itemBatch(it); b != nil {
			out = append(out, b)
		}
		t.store.drop(it)
	}
	return out, len(items)
}

// forgetDurable deletes the acknowledged batches for peer that its
// checkpoint covers (marks from its status).
func (t *HTTPTransport) forgetDurable(peer int, marks []DurableMark) {
	through := map[uint64]uint64{}
	for _, m := range marks {
		if m.From == t.self {
			through[m.Epoch] = m.Through
		}
	}
	if len(through) == 0 {
		return
	}
	q := t.queues[peer]
	q.mu.Lock()
	defer q.mu.Unlock()
	keep := q.acked[:0]
	for _, it := range q.acked {
		if it.seq <= through[it.epoch] {
			t.store.drop(it)
		} else {
			keep = append(keep, it)
		}
	}
	clear(q.acked[len(keep):])
	q.acked = keep
}

func (t *HTTPTransport) sender(dest int, q *peerQueue) {
	defer t.wg.Done()
	backoff := 50 * time.Millisecond
	for {
		q.mu.Lock()
		var it *outItem
		if len(q.items) > 0 {
			it = q.items[0]
		}
		q.mu.Unlock()
		if it == nil {
			select {
			case <-t.stop:
				return
			case <-q.ready:
				continue
			}
		}
		// The handshake comes before any batch.
		if err := t.greet(dest); err != nil {
			if errors.Is(err, errTopology) {
				<-t.stop // the crawl is failing
				return
			}
			select {
			case <-t.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		q.mu.Lock()
		body, err := t.store.body(it)
		q.mu.Unlock()
		var ack BatchAck
		if err == nil {
			ack, err = t.post(dest, body)
		}
		if err != nil {
			select {
			case <-t.stop:
				return
			case <-q.ready:
				// woken: the queue changed (a requeue or a take)
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		t.observe(dest, ack.Epoch)
		q.mu.Lock()
		mine := len(q.items) > 0 && q.items[0] == it
		if mine {
			q.items[0] = nil
			q.items = q.items[1:]
			// Kept, should the receiver restart before its checkpoint
			// covers it.
			it.ackedBy = ack.Epoch
			if ack.Durable {
				t.store.drop(it)
			} else {
				q.acked = append(q.acked, it)
			}
		}
		q.mu.Unlock()
		if !mine {
			continue // taken for fail-over meanwhile
		}
		t.sent.Add(1)
		t.tr.Add(-1)
	}
}

func (t *HTTPTransport) request(c *http.Client, method string, dest int, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, "http://"+t.peers[dest]+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set(HeaderTopology, t.topoHash)
	req.Header.Set(HeaderTo, strconv.Itoa(dest))
	if body != nil {
		req.Header.Set("Content-Type", BatchContentType)
		req.Header.Set(HeaderEpoch, strconv.FormatUint(t.epoch.Load(), 10))
	}
	return c.Do(req)
}

func (t *HTTPTransport) post(dest int, body []byte) (BatchAck, error) {
	var ack BatchAck
	url := "http://" + t.peers[dest] + PathBatch
	resp, err := t.request(t.client, http.MethodPost, dest, PathBatch, body)
	if err != nil {
		return ack, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		text := strings.TrimSpace(string(msg))
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
		case http.StatusPreconditionFailed, http.StatusMisdirectedRequest:
			t.failTopology(fmt.Errorf("%w: node %d (%s) refused a batch: %s: %s", t.errConfig, dest, t.peers[dest], resp.Status, text))
		case http.StatusConflict:
			// The peer knows a later epoch of this node: move past it.
			if cur, err := strconv.ParseUint(resp.Header.Get(HeaderEpochCurrent), 10, 64); err == nil {
				t.moveEpochPast(cur, fmt.Sprintf("node %d answered %s", dest, text))
			}
		default:
			t.logf("%s: %s: %s", url, resp.Status, text)
		}
		return ack, fmt.Errorf("recorder: %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&ack); err != nil || ack.Epoch == 0 {
		return ack, fmt.Errorf("recorder: %s: bad acknowledgement", url)
	}
	return ack, nil
}
