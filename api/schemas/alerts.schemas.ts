import { z } from './zod.js';
import { isoDateTime, nextCursor, pageQuery, usageFields } from './common.schemas.js';
import { alertInput } from '../../core/ingest/input.schemas.js';

export const alertInputSchema = alertInput.openapi('AlertInput');

export const alertSchema = z
  .object({
    id: z.number().int().openapi({ description: 'ext' }),
    dateTime: z.string(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    text: z.string().nullable(),
    alertName: z.string().openapi({
      description:
        'The platform\'s names, and trackgate\'s for tracker alarms the platform has no name for (docs/tracker-gateway.md "Alarms become alerts"): a client must expect names outside the platform list.',
    }),
    alerts: z.array(z.string()),
    notifications: z.array(z.enum(['Email', 'SMS'])).openapi({ description: 'Channels actually used for this alert.' }),
    suppressed: z
      .record(z.string(), z.enum(['dailyLimitReached', 'notConfigured', 'deviceExpired', 'noRecipients']))
      .openapi({ description: 'ext: per channel, why nothing was sent.' }),
  })
  .openapi('Alert');

export const alertsBodySchema = z
  .object({
    alert: alertInputSchema.optional().openapi({ description: 'Raise one alert.' }),
    from: isoDateTime.optional(),
    to: isoDateTime.optional(),
    alertName: z.string().max(64).optional().openapi({ description: 'Only alerts with this name (range queries).' }),
    ...pageQuery,
  })
  .refine((b) => b.alert !== undefined || (b.from !== undefined && b.to !== undefined), {
    message: 'send `alert` to raise one, or `from` and `to` to read a range',
  })
  .refine((b) => (b.from === undefined) === (b.to === undefined), {
    message: '`from` and `to` go together',
    path: ['to'],
  })
  .openapi('AlertsRequest');

export const alertsResponse = z.object({
  success: z.literal(true),
  alerts: z.array(alertSchema),
  nextCursor: nextCursor.optional(),
  ...usageFields,
});
