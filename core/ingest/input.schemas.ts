/**
 * What a client may send as a location or an alert (docs/contract.md §2), whatever carries it: the
 * REST bodies (api/ adds the OpenAPI names) and MQTT payloads validate with these same schemas.
 * Unknown fields are dropped.
 */
import { z } from 'zod';
import { jsonLength, MAX_ATTRIBUTES_JSON, MAX_JSON_DEPTH } from './json.limits.js';
import { ISO_DATE_TIME_PATTERN, isRealDateTime } from './date-time.checks.js';

// the date-time checks live without zod, for what checks a date-time without a schema (prepared.checks.ts)
export { ISO_DATE_TIME_PATTERN, isRealDateTime };

/** Any ISO 8601 date-time with a zone (`Z` or `±hh:mm`), e.g. 2026-03-01T10:00:00Z; a real one. */
export const isoDateTime = z
  .string()
  .regex(ISO_DATE_TIME_PATTERN, 'must be an ISO 8601 date-time with a zone, e.g. 2026-03-01T10:00:00Z')
  .refine(
    isRealDateTime,
    'is not a real date and time (check the month, the day of the month, hours, minutes and seconds)',
  )
  .meta({
    format: 'date-time',
    example: '2026-03-01T10:00:00Z',
    description: 'ISO 8601 date-time with a zone, e.g. 2026-03-01T10:00:00Z',
  });

const num = () => z.number().finite().nullable().optional();
const strings = () => z.array(z.string().max(500)).max(100).optional();

export const locationInput = z.object({
  dateTime: isoDateTime.describe('Fix time.'),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  speed: z.number().min(0).max(2000).nullable().optional().describe('km/h'),
  course: z.number().min(0).max(360).nullable().optional().describe('degrees'),
  battery: z.number().min(0).max(100).nullable().optional().describe('%'),
  fuel: num(),
  fuel2: num(),
  temperature: num(),
  temperature2: num(),
  sensorTime1: num(),
  sensorTime2: num(),
  sensorTime3: num(),
  sensorTime4: num(),
  inactiveSeconds: num(),
  rpm: num(),
  milleage: num().describe('km (the platform spells it so).'),
  warningTexts: strings(),
  alertTexts: strings(),
  alerts: strings(),
  warnings: strings(),
  hasCriticalAlert: z.boolean().nullable().optional(),
  attributes: z
    .record(z.string(), z.unknown())
    .refine(
      (a) => jsonLength(a, MAX_ATTRIBUTES_JSON) <= MAX_ATTRIBUTES_JSON,
      `must be at most ${MAX_ATTRIBUTES_JSON} characters as JSON`,
    )
    .optional()
    .describe(
      `Free-form values; at most ${MAX_ATTRIBUTES_JSON} characters as JSON, nested at most ${MAX_JSON_DEPTH} levels.`,
    ),
  accessoriesAttributes: z
    .array(z.record(z.string(), z.unknown()))
    .max(100)
    .refine(
      (a) => jsonLength(a, MAX_ATTRIBUTES_JSON) <= MAX_ATTRIBUTES_JSON,
      `must be at most ${MAX_ATTRIBUTES_JSON} characters as JSON`,
    )
    .optional(),
  inputs: z.array(z.boolean()).max(64).optional(),
  outputs: z.array(z.boolean()).max(64).optional(),
  altitude: num().describe('ext: metres'),
  accuracy: num().describe('ext: metres'),
  satellites: z.number().int().min(0).max(255).nullable().optional(),
  valid: z.boolean().nullable().optional(),
});

export const alertInput = z
  .object({
    dateTime: isoDateTime.optional().describe('When it happened (default: now).'),
    latitude: z
      .number()
      .min(-90)
      .max(90)
      .nullable()
      .optional()
      .describe('Where it happened; absent: the last location of the device, when it has one.'),
    longitude: z.number().min(-180).max(180).nullable().optional(),
    text: z.string().max(1000).nullable().optional(),
    alertName: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .describe(
        'Usually one of the platform names (SOSButton, SpeedLimit, LowBattery, GPSUnplugged, Vibration, ForbiddenArea, HarshBraking, …). Any name of 1 to 64 characters is stored as given: trackgate itself names the tracker alarms the platform has no name for (docs/tracker-gateway.md "Alarms become alerts": Movement, PowerCut, Tow, …), so a client must expect names outside the platform list.',
      ),
    alerts: z.array(z.string().max(64)).max(20).optional(),
  })
  .refine((a) => (a.latitude == null) === (a.longitude == null), {
    message: 'latitude and longitude go together (send both, or neither to use the last location)',
    path: ['longitude'],
  });

/** As many locations per request or message as a client may send at once. */
export const MAX_LOCATIONS_PER_REQUEST = 5000;
