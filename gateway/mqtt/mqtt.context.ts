/**
 * What every MQTT hook works with: one object made by startMqttGateway and passed first to each
 * hook (mqtt.authenticate.ts, mqtt.authorize-*.ts, mqtt.client-ready.ts, mqtt.user-recheck.ts).
 */
import type { DeviceDirectory } from '../../core/devices/device-directory.js';
import type { Logger } from '../../core/logger.js';
import type { Clock } from '../../core/clock.js';
import type { Authenticator } from './mqtt.auth.js';
import type { PublishHandler } from './mqtt.publish.js';
import type { LiveFeed } from './live.feed.js';
import type { OutboxLimits } from './live.outbox.js';
import type { RateOptions } from './publish.limits.js';
import type { Sessions } from './mqtt.sessions.js';
import type { MqttCommands } from './mqtt.commands.js';

export interface MqttContext {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly directory: DeviceDirectory;
  readonly auth: Authenticator;
  readonly publisher: PublishHandler;
  readonly live: LiveFeed;
  readonly sessions: Sessions;
  /** per-client publish rate */
  readonly rate: RateOptions;
  /** per live subscriber (default: live.outbox.ts) */
  readonly liveOutbox?: OutboxLimits;
  /** commands to MQTT devices (absent: devices get none) */
  readonly commands?: MqttCommands;
}
