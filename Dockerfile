# syntax=docker/dockerfile:1
# Build: compile TypeScript and native addons; run: production dependencies only, as a non-root user.
FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3 msgpackr-extract
COPY tsconfig.json tsconfig.build.json ./
COPY config ./config
COPY protocols ./protocols
COPY core ./core
COPY gateway ./gateway
COPY api ./api
COPY server ./server
COPY main.ts gateway-main.ts cli.ts ./
COPY console ./console
COPY bin ./bin
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production TRACKGATE_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY console ./console
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# REST 8080, MQTT 1883 / WebSocket 8083 / TLS 8883, tracker protocols (see README).
EXPOSE 8080 1883 8083 8883 5001 5002 5004 5011 5013 5015 5020 5023 5027 5027/udp 5046 5055 5093 \
  5005 5005/udp 5009 5009/udp 5010 5019 5030 5030/udp 5034 5039 5039/udp 5044 5044/udp 5006 5007 5048 5149 5187 5064 5064/udp 5086 5086/udp 5222
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s CMD node -e "fetch('http://127.0.0.1:8080/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "--enable-source-maps", "dist/cli.js"]
CMD ["serve"]
