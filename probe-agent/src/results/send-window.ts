import { IN_FLIGHT, QUEUED, type Item, type ResultBuffer } from './buffer.ts';

/** Publishes one message with its dedupe id and resolves on the server's ack. */
export type PublishFn = (subject: string, payload: string, msgId: string) => Promise<{ duplicate: boolean }>;

/** The publishes awaiting their ack. */
export type SendWindow = {
  readonly inFlight: number;
  /** Publish attempts that failed or timed out. */
  readonly failures: number;
  /** Sends queued results in push order while the window has room. */
  fill(): void;
  /** Sends one result whatever the window holds. */
  send(item: Item): void;
  /** What is in flight goes back to the queue; a late ack of it still counts. */
  abandon(): void;
};

export type SendWindowOptions = {
  size: number;
  buffer: ResultBuffer;
  publish: PublishFn;
  /** The latest attempt's ack, or an abandoned attempt's. */
  onAck(item: Item, duplicate: boolean): void;
  /** Only the latest attempt's failure: an abandoned attempt was sent again already. */
  onFail(item: Item, err: unknown): void;
};

export function createSendWindow(opts: SendWindowOptions): SendWindow {
  let inFlight = 0;
  let failures = 0;

  function send(item: Item): void {
    item.state = IN_FLIGHT;
    inFlight++;
    const attempt = ++item.sends;
    let sending: Promise<{ duplicate: boolean }>;
    try {
      sending = opts.publish(item.subject, item.payload, item.msgId);
    } catch (err) {
      sending = Promise.reject(err);
    }
    sending.then(
      (ack) => acked(item, ack.duplicate, attempt),
      (err: unknown) => failed(item, err, attempt),
    );
  }

  function acked(item: Item, duplicate: boolean, attempt: number): void {
    // An abandoned attempt no longer counts as in flight, but its ack still means stored.
    if (attempt === item.sends) inFlight--;
    opts.onAck(item, duplicate);
  }

  function failed(item: Item, err: unknown, attempt: number): void {
    failures++;
    if (attempt !== item.sends) return;
    inFlight--;
    if (item.state === IN_FLIGHT) item.state = QUEUED;
    opts.onFail(item, err);
  }

  return {
    get inFlight() {
      return inFlight;
    },
    get failures() {
      return failures;
    },
    fill() {
      while (inFlight < opts.size) {
        const item = opts.buffer.nextToSend();
        if (item === undefined) return;
        send(item);
      }
    },
    send,
    abandon() {
      inFlight -= opts.buffer.requeueInFlight();
    },
  };
}
