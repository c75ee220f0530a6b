/** A forward of an account (docs/contract.md "Forwards", *ext* `/api/forwards`). */
export type ForwardType = 'webhook' | 'mqtt' | 'amqp';
export type ForwardEventKind = 'locations' | 'alerts';

export const FORWARD_TYPES: readonly ForwardType[] = ['webhook', 'mqtt', 'amqp'];
export const FORWARD_EVENT_KINDS: readonly ForwardEventKind[] = ['locations', 'alerts'];

export interface Forward {
  id: string;
  accountId: string;
  name: string;
  type: ForwardType;
  /** as given, credentials included (shown masked) */
  url: string;
  events: ForwardEventKind[];
  /** only the devices of this group */
  groupId: string | null;
  enabled: boolean;
  /** mqtt: the topic template; amqp: the routing-key template */
  topic: string | null;
  /** amqp: the exchange */
  exchange: string | null;
  /** webhook: the HMAC-SHA256 key of X-Trackgate-Signature */
  secret: string | null;
  created: number;
  modified: number;
}

/** Where a forward's delivery stands. */
export interface ForwardProgress {
  /** the id of the last event delivered (or passed over: another kind, another group) */
  cursor: number;
  lastDeliveredAt: number | null;
  lastError: string | null;
  failingSince: number | null;
  /** messages retention dropped before they could be delivered */
  dropped: number;
}

/** One message as a forward sends it: `{id, event, deviceId, location | alert}`. */
export interface ForwardMessage {
  /** the event id: stable, so a receiver can drop a repeat */
  id: number;
  event: 'location' | 'alert';
  deviceId: string;
  /** the whole message as JSON text */
  json: string;
}
