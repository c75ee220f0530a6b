// The one Leaflet map beside the panels: the fleet's last positions, or one device's track.
// Without Leaflet or tiles the page still works: the lists carry everything the map shows.

const OSM_ATTRIBUTION = '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors';

/** Outline and fill by status, and a size: the list says the status in words. */
const STYLE = {
  online: { color: '#0b57d0', fillColor: '#4b8bf5', radius: 7 },
  offline: { color: '#333', fillColor: '#aaa', radius: 6 },
  expired: { color: '#333', fillColor: '#fff', radius: 5 },
};

export class ConsoleMap {
  constructor(el, tileUrl) {
    this.L = window.L;
    this.markers = new Map();
    if (!this.L) {
      el.textContent = 'The map could not be loaded; the lists show every device and position.';
      return;
    }
    const L = this.L;
    this.map = L.map(el, { preferCanvas: true, worldCopyJump: true }).setView([20, 0], 2);
    if (tileUrl) {
      const attribution = /openstreetmap\.org/.test(tileUrl) ? OSM_ATTRIBUTION : '';
      L.tileLayer(tileUrl, { maxZoom: 19, attribution }).addTo(this.map);
    }
    this.fleetLayer = L.layerGroup().addTo(this.map);
    this.trackLayer = L.layerGroup().addTo(this.map);
  }

  /** Leaflet measures its box: after the map's box changed size (a view shown). */
  resized() {
    this.map?.invalidateSize();
  }

  /** Shows or moves the marker of one device; `location` null removes it. */
  setDevice(entry, onClick) {
    if (!this.map) return;
    const loc = entry.lastLocation;
    let marker = this.markers.get(entry.deviceId);
    if (!loc) {
      if (marker) this.fleetLayer.removeLayer(marker);
      this.markers.delete(entry.deviceId);
      return;
    }
    const style = STYLE[entry.status] ?? STYLE.offline;
    if (!marker) {
      marker = this.L.circleMarker([loc.latitude, loc.longitude], { weight: 2, fillOpacity: 0.9, ...style });
      marker.bindTooltip(entry.name);
      marker.on('click', () => onClick(entry.deviceId));
      this.fleetLayer.addLayer(marker);
      this.markers.set(entry.deviceId, marker);
    } else {
      marker.setLatLng([loc.latitude, loc.longitude]);
      marker.setStyle(style);
    }
  }

  /** Removes every fleet marker but those in `keep`. */
  keepOnly(keep) {
    for (const [id, marker] of this.markers) {
      if (keep.has(id)) continue;
      this.fleetLayer.removeLayer(marker);
      this.markers.delete(id);
    }
  }

  showFleet(visible) {
    if (!this.map) return;
    if (visible) this.fleetLayer.addTo(this.map);
    else this.fleetLayer.remove();
  }

  fitFleet() {
    if (!this.map || this.markers.size === 0) return;
    const bounds = this.L.latLngBounds([...this.markers.values()].map((m) => m.getLatLng()));
    this.map.fitBounds(bounds, { maxZoom: 14, padding: [20, 20] });
  }

  /** One device's track: a line through its positions, the first and last marked. */
  showTrack(locations) {
    if (!this.map) return;
    this.trackLayer.clearLayers();
    this.selected = undefined;
    if (locations.length === 0) return;
    const points = locations.map((l) => [l.latitude, l.longitude]);
    this.L.polyline(points, { color: '#0b57d0', weight: 4 }).addTo(this.trackLayer);
    this.L.circleMarker(points[0], { radius: 6, color: '#111', fillColor: '#fff', fillOpacity: 1 })
      .bindTooltip('Start')
      .addTo(this.trackLayer);
    this.L.circleMarker(points.at(-1), { radius: 8, color: '#111', fillColor: '#111', fillOpacity: 1 })
      .bindTooltip('End')
      .addTo(this.trackLayer);
    this.map.fitBounds(this.L.latLngBounds(points), { maxZoom: 16, padding: [20, 20] });
  }

  /** Marks one position of the track (a row of its list chosen). */
  select(location) {
    if (!this.map) return;
    this.selected?.remove();
    const ll = [location.latitude, location.longitude];
    this.selected = this.L.circleMarker(ll, { radius: 10, color: '#d00', weight: 3, fill: false }).addTo(this.map);
    this.map.panTo(ll);
  }

  clearTrack() {
    this.trackLayer?.clearLayers();
    this.selected?.remove();
    this.selected = undefined;
  }
}
