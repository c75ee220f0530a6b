import { z } from '../schemas/zod.js';
import { addRoute } from '../route.js';
import { errorResponseSchema } from '../schemas/common.schemas.js';
import type { RouteTable } from '../route.js';
import { API_KEY_MAX, USER_NAME_MAX, type TokensService } from '../../core/auth/tokens.service.js';

const tokenRequest = z
  .object({
    userName: z.string().min(1, 'userName must not be empty').max(USER_NAME_MAX),
    apiKey: z.string().min(1, 'apiKey must not be empty').max(API_KEY_MAX),
  })
  .openapi('TokenRequest');

const tokenResponse = z
  .object({
    success: z.literal(true),
    token: z.string().openapi({ description: 'JWT bearer token.' }),
    expires: z
      .string()
      .openapi({ description: "ISO 8601 UTC; equals the JWT's exp.", example: '2026-03-01T11:00:00.000Z' }),
  })
  .openapi('TokenResponse');

export function authRoutes(api: RouteTable, tokens: TokensService): void {
  addRoute(api, {
    method: 'post',
    path: '/api/Auth/Token',
    summary: 'Obtain a token',
    description:
      'The path matches without regard to case. Repeated failures from one address, and for one user name from one address, are rate limited (429 with Retry-After); failures from other addresses never lock a user out.',
    tags: ['Auth'],
    auth: false,
    body: tokenRequest,
    responses: {
      200: { description: 'Token issued.', schema: tokenResponse },
      401: { description: 'Invalid credentials; no token.', schema: errorResponseSchema },
      429: {
        description:
          'RATE_LIMITED: too many failures from this address (or for this user name from it); Retry-After says when to try again.',
        schema: errorResponseSchema,
      },
    },
    handler: async (ctx, { body }) => {
      const issued = await tokens.issue(body.userName, body.apiKey, ctx.ip);
      return { body: { success: true, token: issued.token, expires: issued.expires } };
    },
  });
}
