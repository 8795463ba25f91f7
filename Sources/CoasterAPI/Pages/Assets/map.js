// The map pages' script (docs: Map). Each page gives its values as JSON in #page-data (the
// Content-Security-Policy allows no inline script); this draws them with Leaflet's SVG renderer,
// so that every zone, marker and cell is an element a test or a screen reader can find, and keeps
// them current from the JSON API and the /v1/live socket (both authenticated by the page's cookie).
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('page-data').textContent || '{}');
  var page = document.body.getAttribute('data-page');

  function ready() { document.body.setAttribute('data-ready', 'true'); }

  function text(value) {
    var span = document.createElement('span');
    span.textContent = value;
    return span;
  }

  function escapeHTML(value) {
    return String(value).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function getJSON(url) {
    return fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(function (response) {
      if (response.status === 401) { window.location.assign('/map/login?next=' + encodeURIComponent(window.location.pathname)); }
      if (!response.ok) { throw new Error(url + ': ' + response.status); }
      return response.json();
    });
  }

  // A map with a scale bar, on the configured tiles or on a plain background.
  function baseMap() {
    var element = document.getElementById('map');
    // A view from the start: until a map has one, Leaflet adds no layer to the page, so nothing
    // drawn before the first fitBounds would have an element to mark.
    var map = L.map(element, { preferCanvas: false, center: [20, 0], zoom: 2 });
    map.attributionControl.setPrefix(false);
    if (data.tiles && data.tiles.url) {
      // nativeZoom: the finest tiles asked for where the page shows other people (the tile
      // server would learn where they are); finer zooms enlarge those.
      L.tileLayer(data.tiles.url, {
        maxZoom: 19, maxNativeZoom: data.tiles.nativeZoom || 19, attribution: escapeHTML(data.tiles.attribution || '')
      }).addTo(map);
    } else {
      element.classList.add('plain');
      if (data.tiles) { map.attributionControl.addAttribution(escapeHTML(data.tiles.attribution || '')); }
    }
    L.control.scale({ metric: true, imperial: true }).addTo(map);
    return map;
  }

  // GeoJSON positions ([lon, lat]) as Leaflet's [lat, lon], at any depth.
  function latLngs(coordinates) {
    if (typeof coordinates[0] === 'number') { return [coordinates[1], coordinates[0]]; }
    return coordinates.map(latLngs);
  }

  function mark(layer, classes, attributes) {
    var element = layer.getElement ? layer.getElement() : layer._icon;
    if (!element) { return; }
    classes.forEach(function (c) { element.classList.add(c); });
    Object.keys(attributes || {}).forEach(function (k) { element.setAttribute(k, attributes[k]); });
  }

  var kindStyle = {
    park: { color: '#1b5e20', weight: 3, fill: false },
    land: { color: '#558b2f', weight: 1, dashArray: '4 4', fillColor: '#c5e1a5', fillOpacity: 0.25 },
    ride: { color: '#37474f', weight: 1, fillColor: '#9e9e9e', fillOpacity: 0.6 },
    queue: { color: '#6a1b9a', weight: 1, fillColor: '#ce93d8', fillOpacity: 0.4 },
    poi: { color: '#0d47a1', weight: 1, fillColor: '#90caf9', fillOpacity: 0.5 }
  };

  // One feature drawn by kind (areas as paths, points as circle markers), with its name on hover
  // and tap. Returns the layers drawn.
  function drawFeature(map, feature, extraClasses) {
    var properties = feature.properties || {};
    var kind = kindStyle[properties.kind] ? properties.kind : 'poi';
    var geometry = feature.geometry;
    if (!geometry || !geometry.coordinates) { return []; }
    var layers = [];
    var style = Object.assign({}, kindStyle[kind]);
    if (geometry.type === 'Polygon' || geometry.type === 'MultiPolygon') {
      layers.push(L.polygon(latLngs(geometry.coordinates), style));
    } else if (geometry.type === 'Point') {
      layers.push(L.circleMarker(latLngs(geometry.coordinates), Object.assign(style, { radius: 6 })));
    } else if (geometry.type === 'MultiPoint') {
      geometry.coordinates.forEach(function (p) { layers.push(L.circleMarker(latLngs(p), Object.assign({}, style, { radius: 6 }))); });
    } else {
      return [];
    }
    layers.forEach(function (layer) {
      layer.addTo(map);
      layer.bindTooltip(text((properties.name || '(no name)') + ' · ' + kind));
      mark(layer, ['zone', 'zone-' + kind].concat(extraClasses || []), { 'data-zone-id': feature.id || properties.id || '' });
    });
    return layers;
  }

  function connectLive(onMessage, statusElement) {
    var delay = 1000;
    function open() {
      var socket = new WebSocket((window.location.protocol === 'https:' ? 'wss://' : 'ws://') + window.location.host + '/v1/live');
      socket.onopen = function () { delay = 1000; if (statusElement) { statusElement.textContent = 'Live: updates arrive as they happen.'; } };
      socket.onmessage = function (event) {
        try { onMessage(JSON.parse(event.data)); } catch (e) { /* a message we do not draw */ }
      };
      socket.onclose = function () {
        if (statusElement) { statusElement.textContent = 'Live updates paused; reconnecting…'; }
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 60000);
      };
    }
    open();
  }

  // MARK: a park

  function band(row) {
    if (row.status === 'down' || row.status === 'closed') { return 'closed'; }
    var minutes = row.estimate && row.estimate.minutes;
    if (minutes === null || minutes === undefined) { return 'none'; }
    if (minutes >= data.bands.long) { return 'long'; }
    if (minutes >= data.bands.medium) { return 'medium'; }
    return 'short';
  }

  var bandColour = { none: '#9e9e9e', short: '#2e7d32', medium: '#f9a825', long: '#c62828', closed: '#424242' };

  function waitText(row) {
    if (row.status === 'down' || row.status === 'closed') { return row.status; }
    var e = row.estimate || {};
    if (e.minutes === null || e.minutes === undefined) { return 'no estimate'; }
    var words = Math.round(e.minutes) + ' min';
    if (e.low !== undefined && e.high !== undefined && e.low !== null) { words += ' (' + Math.round(e.low) + '–' + Math.round(e.high) + ')'; }
    words += ' · ' + e.reports + (e.reports === 1 ? ' report' : ' reports');
    if (e.newestReportAge !== undefined && e.newestReportAge !== null) { words += ', ' + Math.round(e.newestReportAge / 60) + ' min ago'; }
    return words;
  }

  function parkPage() {
    var map = baseMap();
    var rides = {};
    var zones = {};
    var status = document.getElementById('live-status');
    function refreshWaits() {
      return getJSON('/v1/parks/' + encodeURIComponent(data.park) + '/waits').then(function (board) {
        board.rides.forEach(function (row) {
          var shown = band(row);
          var words = waitText(row);
          var minutes = row.estimate && row.estimate.minutes !== null && row.estimate.minutes !== undefined ? String(Math.round(row.estimate.minutes)) : '';
          (rides[row.ride] || []).forEach(function (layer) {
            layer.setStyle({ fillColor: bandColour[shown] });
            mark(layer, [], { 'data-band': shown, 'data-minutes': minutes });
            layer.setTooltipContent(text(row.name + ' · ' + words));
          });
          var cells = document.querySelectorAll('td.wait[data-ride-id="' + CSS.escape(row.ride) + '"]');
          Array.prototype.forEach.call(cells, function (cell) {
            cell.textContent = words;
            cell.setAttribute('data-band', shown);
            cell.setAttribute('data-minutes', minutes);
          });
        });
        if (status) { status.textContent = 'Waits updated ' + new Date().toLocaleTimeString() + '.'; }
      });
    }
    getJSON('/v1/parks/' + encodeURIComponent(data.park)).then(function (file) {
      var bounds = null;
      file.features.forEach(function (feature) {
        var layers = drawFeature(map, feature);
        var kind = (feature.properties || {}).kind;
        layers.forEach(function (layer) {
          if (kind === 'park') { bounds = layer.getBounds(); layer.bringToBack(); }
          if (kind === 'ride') {
            mark(layer, [], { 'data-ride-id': feature.id, 'data-band': 'none' });
            (rides[feature.id] = rides[feature.id] || []).push(layer);
          }
          (zones[feature.id] = zones[feature.id] || []).push(layer);
        });
      });
      if (bounds) { map.fitBounds(bounds); } else { map.setView([0, 0], 2); }
      document.querySelectorAll('button.zone-link').forEach(function (button) {
        button.addEventListener('click', function () {
          var row = button.closest('tr');
          var layers = zones[row.getAttribute('data-ride-id')] || zones[row.getAttribute('data-zone-id')] || [];
          if (layers.length) { map.fitBounds(layers[0].getBounds(), { maxZoom: 18 }); layers[0].openTooltip(); }
        });
      });
      return refreshWaits();
    }).catch(function (error) {
      if (status) { status.textContent = 'The park could not be drawn: ' + error.message; }
    }).then(ready);
    // Waits change for everyone; the live socket tells visitors of the park at once, and every
    // page reads the board again now and then.
    var pending = null;
    function soon() { if (!pending) { pending = setTimeout(function () { pending = null; refreshWaits(); }, 500); } }
    connectLive(function (message) {
      if (message.type === 'wait' || message.type === 'status' || message.type === 'board') { soon(); }
    }, status);
    setInterval(refreshWaits, 15000);
  }

  // MARK: me and my friends

  function mePage() {
    var map = baseMap();
    var me = null;
    var accuracy = null;
    var friends = {};
    var fitted = false;
    var step = data.grid.latitudeStep;

    function divMarker(latLng, classes, attributes, label) {
      var marker = L.marker(latLng, { icon: L.divIcon({ className: classes.join(' '), iconSize: [16, 16] }), keyboard: true, title: label });
      marker.addTo(map);
      marker.bindTooltip(text(label));
      mark(marker, [], attributes);
      return marker;
    }

    function drawMe(position) {
      if (!position) { return; }
      var latLng = [position.lat, position.lon];
      var attributes = { 'data-lat': String(position.lat), 'data-lon': String(position.lon) };
      if (!me) {
        accuracy = L.circle(latLng, { radius: position.accuracy, color: '#1565c0', weight: 1, fillOpacity: 0.15 }).addTo(map);
        mark(accuracy, ['me-accuracy']);
        me = divMarker(latLng, ['me-marker'], attributes, 'You');
      } else {
        me.setLatLng(latLng);
        accuracy.setLatLng(latLng);
        accuracy.setRadius(position.accuracy);
        mark(me, [], attributes);
      }
    }

    function removeFriend(id) {
      (friends[id] || []).forEach(function (layer) { map.removeLayer(layer); });
      delete friends[id];
    }

    // One friend's `location` message, as /v1/live sends it and /map/me/state.json repeats it.
    function drawFriend(message) {
      var id = String(message.user.id);
      var name = message.user.displayName || message.user.username;
      removeFriend(id);
      if (message.precision === 'exact') {
        friends[id] = [divMarker([message.lat, message.lon], ['friend', 'friend-exact'],
          { 'data-user-id': id, 'data-lat': String(message.lat), 'data-lon': String(message.lon) }, name)];
      } else if (message.precision === 'approximate') {
        // The snapped cell the rules put them in, never a point inside it.
        var lonStep = step / Math.max(0.01, Math.cos(message.lat * Math.PI / 180));
        var cell = L.rectangle([[message.lat - step / 2, message.lon - lonStep / 2], [message.lat + step / 2, message.lon + lonStep / 2]],
          { color: '#ef6c00', weight: 1, fillOpacity: 0.2 }).addTo(map);
        cell.bindTooltip(text(name + ' · somewhere in this area'));
        mark(cell, ['friend-cell'], { 'data-user-id': id });
        friends[id] = [cell];
      }
      var item = document.querySelector('#friends li[data-user-id="' + CSS.escape(id) + '"]');
      if (!item) {
        item = document.createElement('li');
        item.setAttribute('data-user-id', id);
        document.getElementById('friends').appendChild(item);
        var none = document.getElementById('no-friends');
        if (none) { none.remove(); }
      }
      var where = message.precision === 'park-only'
        ? 'in ' + ((message.park && message.park.name) || (message.parks || []).join(', '))
        : (message.precision === 'exact' ? 'exact position' : 'approximate area') + (message.park ? ', at ' + message.park.name : '');
      item.className = 'friend-' + message.precision;
      item.setAttribute('data-precision', message.precision);
      item.textContent = name + ' — ' + where;
    }

    function apply(state) {
      drawMe(state.me);
      var seen = {};
      state.friends.forEach(function (json) {
        var message = JSON.parse(json);
        seen[String(message.user.id)] = true;
        drawFriend(message);
      });
      // A friend no longer shared (stale, or sharing turned off) leaves the map and the list.
      Object.keys(friends).forEach(function (id) { if (!seen[id]) { removeFriend(id); } });
      document.querySelectorAll('#friends li[data-user-id]').forEach(function (item) {
        if (!seen[item.getAttribute('data-user-id')]) { item.remove(); }
      });
      if (!fitted) {
        var points = [];
        if (state.me) { points.push([state.me.lat, state.me.lon]); }
        state.friends.forEach(function (json) { var m = JSON.parse(json); if (m.lat !== undefined) { points.push([m.lat, m.lon]); } });
        if (points.length) { map.fitBounds(L.latLngBounds(points).pad(0.5), { maxZoom: 17 }); fitted = true; } else { map.setView([20, 0], 2); }
      }
      var status = document.getElementById('me-status');
      if (status && state.me) {
        status.textContent = 'Your latest fix: ' + state.me.lat.toFixed(5) + ', ' + state.me.lon.toFixed(5) + ' (±' + Math.round(state.me.accuracy) + ' m) at ' + state.me.at + '.';
      }
    }

    apply(data.state);
    ready();
    function refresh() { getJSON('/map/me/state.json').then(apply).catch(function () {}); }
    connectLive(function (message) {
      if (message.type === 'location') { drawFriend(message); } else if (message.type === 'transition') { refresh(); }
    });
    setInterval(refresh, 10000);
  }

  // MARK: an admin's preview of a park file

  function adminPage() {
    var map = baseMap();
    var source = document.getElementById('park-document');
    var preview = data.preview || { problems: [] };
    var markers = [];
    var bounds = L.latLngBounds([]);
    if (source) {
      var file = JSON.parse(source.textContent);
      var withProblems = {};
      preview.problems.forEach(function (p) { if (p.feature !== undefined && p.feature !== null) { withProblems[p.feature] = true; } });
      (Array.isArray(file.features) ? file.features : []).slice(0, 10000).forEach(function (feature, index) {
        if (!feature || typeof feature !== 'object') { return; }
        try {
          drawFeature(map, feature, withProblems[index] ? ['has-problem'] : []).forEach(function (layer) {
            bounds.extend(layer.getBounds ? layer.getBounds() : layer.getLatLng());
            if (withProblems[index]) { layer.setStyle({ color: '#b71c1c', weight: 2 }); }
          });
        } catch (e) { /* a geometry too broken to draw: its problem is listed */ }
      });
    }
    preview.problems.forEach(function (problem, index) {
      if (!problem.at) { return; }
      var marker = L.marker(problem.at, {
        icon: L.divIcon({ className: 'problem-marker', iconSize: [18, 18], html: '' }), title: problem.reason, keyboard: true
      }).addTo(map);
      marker.bindTooltip(text((problem.feature !== undefined && problem.feature !== null ? 'Feature ' + problem.feature + ': ' : '') + problem.reason));
      mark(marker, [], { 'data-lat': String(problem.at[0]), 'data-lon': String(problem.at[1]), 'data-index': String(index),
        'data-feature': problem.feature === undefined || problem.feature === null ? '' : String(problem.feature) });
      markers[index] = marker;
      bounds.extend(problem.at);
    });
    document.querySelectorAll('button.problem-link').forEach(function (button) {
      button.addEventListener('click', function () {
        var marker = markers[Number(button.getAttribute('data-index'))];
        if (marker) { map.setView(marker.getLatLng(), 18); marker.openTooltip(); }
      });
    });
    if (bounds.isValid()) { map.fitBounds(bounds.pad(0.1)); } else { map.setView([20, 0], 2); }
    ready();
  }

  // MARK: a day's density over a park

  function densityPage() {
    var map = baseMap();
    var bounds = L.latLngBounds([]);
    getJSON('/v1/parks/' + encodeURIComponent(data.park)).then(function (file) {
      file.features.forEach(function (feature) {
        if ((feature.properties || {}).kind !== 'park') { return; }
        drawFeature(map, feature).forEach(function (layer) { bounds.extend(layer.getBounds()); });
      });
    }).catch(function () {}).then(function () {
      var most = 1;
      data.cells.forEach(function (c) { most = Math.max(most, c.fixes + c.checkins); });
      data.cells.forEach(function (c) {
        var cell = L.rectangle([[c.south, c.west], [c.north, c.east]],
          { stroke: false, fillColor: '#d84315', fillOpacity: 0.15 + 0.7 * (c.fixes + c.checkins) / most }).addTo(map);
        cell.bindTooltip(text(c.fixes + ' fixes, ' + c.checkins + ' check-ins, ' + c.people + ' people'));
        mark(cell, ['density-cell'], { 'data-people': String(c.people), 'data-fixes': String(c.fixes), 'data-checkins': String(c.checkins) });
        bounds.extend(cell.getBounds());
      });
      if (bounds.isValid()) { map.fitBounds(bounds); } else { map.setView([20, 0], 2); }
      ready();
    });
  }

  if (typeof L === 'undefined') {
    var element = document.getElementById('map');
    if (element) { element.textContent = 'The map needs Leaflet, which is not installed on this server (Debian: libjs-leaflet).'; }
    ready();
    return;
  }
  var pages = { park: parkPage, me: mePage, admin: adminPage, density: densityPage };
  if (pages[page] && document.getElementById('map')) { pages[page](); } else { ready(); }
})();
