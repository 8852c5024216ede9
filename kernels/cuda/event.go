//go:build cgo && linux

package cuda

import ()

// NewEvent creates an event for timing work on the default stream.
func (c *Context) NewEvent() (*Event, error) { return c.newEvent(0) }

// NewSyncEvent creates an event only to wait for (Synchronize): one that
// records no time, which the driver records and waits for at less cost.
// Elapsed refuses it.
func (c *Context) NewSyncEvent() (*Event, error) { return c.newEvent(2) } // CU_EVENT_DISABLE_TIMING

func (c *Context) newEvent(flags uint32) (*Event, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	e, r := eventCreate(c.ctx, flags)
	if r != 0 {
		return nil, driverError("cuEventCreate", "", r)
	}
	return &Event{c: c, ev: e, sync: flags == 2}, nil
}

// SyncEvent is NewSyncEvent reusing an event that PutEvent gave back when
// there is one: creating and destroying an event are driver calls of a
// few microseconds each on the device machine, and a build uses the same
// few again and again. Its last record may already have happened: record
// it before waiting for it.
func (c *Context) SyncEvent() (*Event, error) {
	c.evMu.Lock()
	if n := len(c.events); n > 0 {
		e := c.events[n-1]
		c.events = c.events[:n-1]
		c.evMu.Unlock()
		return e, nil
	}
	c.evMu.Unlock()
	return c.NewSyncEvent()
}

// PutEvent gives e back: a sync event is kept for SyncEvent (destroyed by
// Close), any other destroyed. e must not be used afterwards.
func (c *Context) PutEvent(e *Event) error {
	if e == nil || e.ev == nil {
		return nil
	}
	if !e.sync || c.closed.Load() {
		return e.Destroy()
	}
	c.evMu.Lock()
	c.events = append(c.events, e)
	c.evMu.Unlock()
	return nil
}

// freeEvents destroys the events PutEvent kept (Close).
func (c *Context) freeEvents() Result {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	var first Result
	for _, e := range c.events {
		if r := eventDestroy(c.ctx, e.ev); r != 0 && first == 0 {
			first = r
		}
		e.ev = nil
	}
	c.events = nil
	return first
}

// Record enqueues the event on the default stream.
func (e *Event) Record() error {
	if err := e.c.ready(); err != nil {
		return err
	}
	return driverError("cuEventRecord", "", eventRecord(e.c.ctx, e.ev))
}

// Synchronize waits until the event has happened. It submits nothing: the
// launches before the event were submitted when it was recorded, and
// those queued since (by another goroutine, say) stay queued.
func (e *Event) Synchronize() error {
	if err := e.c.check(); err != nil {
		return err
	}
	return driverError("cuEventSynchronize", "", eventSync(e.c.ctx, e.ev))
}

// Destroy releases the event; it is idempotent.
func (e *Event) Destroy() error {
	if e == nil || e.ev == nil || e.c.closed.Load() {
		return nil
	}
	r := eventDestroy(e.c.ctx, e.ev)
	e.ev = nil
	return driverError("cuEventDestroy", "", r)
}

// Elapsed returns the milliseconds between two recorded events.
func Elapsed(start, end *Event) (float32, error) {
	if err := start.c.check(); err != nil {
		return 0, err
	}
	ms, r := eventElapsed(start.c.ctx, start.ev, end.ev)
	return ms, driverError("cuEventElapsedTime", "", r)
}

// function returns the named kernel of the image, resolved once and cached.
